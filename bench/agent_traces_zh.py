"""The Chinese conversations of bench.agent_traces: e-commerce after-sales, travel booking, data analysis, a bank."""

from __future__ import annotations

import random
from datetime import date, datetime, timedelta
from typing import Any

from bench.agent_traces import AgentTrace, Call, Conversation, as_json, function, prop

__all__ = ["traces"]

Record = dict[str, Any]


def traces() -> tuple[AgentTrace, ...]:
    """ecommerce-zh, travel-zh, data-zh, bank-zh."""
    return ecommerce(), travel(), data(), bank()


# ---------------------------------------------------------------------------------------------------------------
# ecommerce-zh: 服装旗舰店售后（换码换款、补差价、取消预售订单）

SHOP_SYSTEM = """你是「云裳」官方旗舰店的售后客服助手，负责查询订单、物流和商品，办理换货、退款和取消订单。

规则：
- 先用下单手机号核实顾客身份，再查询订单。
- 签收7天内支持无理由退换（吊牌完好、未洗涤）；质量问题签收15天内包邮退换。
- 换货只能换有库存的商品，差价多退少补；换货差价不能使用优惠券。
- 退款默认原路返回；顾客明确要求时才退到店铺余额。
- 预售商品未发货可直接取消，全额退款。
- 涉及金额的操作，先说明金额并得到顾客确认。
- 用简体中文回复，亲切简洁，不要称呼顾客为“亲”。"""

SHOP_TOOLS = (
    function("get_user", "按手机号查询顾客资料：会员等级、地址、支付方式。",
             {"phone": prop("string", "11位手机号")}, ("phone",)),
    function("get_order", "查询订单详情：商品、优惠、支付、物流。",
             {"order_id": prop("string", "订单号，如 DD20260101-0001")}, ("order_id",)),
    function("list_orders", "顾客近若干天的订单，按下单时间倒序。",
             {"user_id": prop("string", "顾客ID"), "days": prop("integer", "最近多少天")}, ("user_id", "days")),
    function("check_stock", "查询某个SKU的库存、各仓库存和补货日期。", {"sku": prop("string", "商品SKU")}, ("sku",)),
    function("search_products", "在店铺商品中搜索，返回款式、价格、颜色尺码库存。",
             {"keyword": prop("string", "关键词"), "size": prop("string", "尺码，如 L"),
              "max_price": prop("number", "最高价格（元）"), "in_stock_only": prop("boolean", "只看有货")},
             ("keyword",)),
    function("list_coupons", "顾客名下的优惠券及使用状态。", {"user_id": prop("string", "顾客ID")}, ("user_id",)),
    function("create_exchange", "创建换货单：上门取件，新商品在取件后发出。",
             {"order_id": prop("string", "订单号"), "item_id": prop("string", "订单内商品行"),
              "new_sku": prop("string", "换成的SKU"), "reason": prop("string", "换货原因"),
              "pickup_slot": prop("string", "上门取件时段，如 2026-12-04 14:00-18:00"),
              "payment_id": prop("string", "补差价使用的支付方式")},
             ("order_id", "item_id", "new_sku", "reason", "pickup_slot")),
    function("cancel_order", "取消未发货订单并退款。",
             {"order_id": prop("string", "订单号"), "reason": prop("string", "取消原因"),
              "refund_to": prop("string", "退款去向", enum=["original", "balance"])},
             ("order_id", "reason", "refund_to")),
    function("add_remark", "给订单添加内部备注（仓库和快递可见）。",
             {"order_id": prop("string", "订单号"), "remark": prop("string", "备注内容")}, ("order_id", "remark")),
    function("send_sms", "按模板给顾客发短信。",
             {"phone": prop("string", "手机号"), "template": prop("string", "模板ID"),
              "params": prop("object", "模板参数")}, ("phone", "template")),
)

SHOPPER = {
    "user_id": "U88230417", "nickname": "小鹿乱撞", "phone": "138****0457", "level": "黄金会员",
    "registered": "2021-03-08", "points": 2310,
    "addresses": [{"address_id": "A1", "name": "陈静", "phone": "138****0457", "region": "上海市 徐汇区",
                   "detail": "漕溪北路88号1203室", "default": True}],
    "payment_methods": {"alipay_9921": {"source": "alipay", "account": "chen***@163.com"},
                        "credit_card_7447": {"source": "credit_card", "bank": "招商银行", "last_four": "7447"},
                        "balance": {"source": "balance", "amount": 36.8}},
}

COAT_ORDER = {
    "order_id": "DD20261130-8842", "user_id": "U88230417", "created": "2026-11-30 21:14:08", "status": "已签收",
    "items": [{"item_id": "1", "sku": "YS-DJ2026-HBL-M", "name": "轻暖连帽中长款羽绒服", "color": "雾霾蓝", "size": "M",
               "price": 1299.0, "qty": 1},
              {"item_id": "2", "sku": "YS-WJ0412-GRY", "name": "羊毛混纺围巾", "color": "燕麦灰", "size": "均码",
               "price": 189.0, "qty": 1}],
    "discounts": [{"type": "coupon", "name": "满1000减100", "amount": 100.0}],
    "paid": {"amount": 1388.0, "payment_id": "alipay_9921", "time": "2026-11-30 21:14:40"},
    "logistics": {"company": "中通快递", "tracking_no": "ZT7731290045512", "status": "已签收",
                  "signed_at": "2026-12-02 18:21:05"},
}


WEEKDAYS_ONLY = "顾客周末不在家，取件和派送请安排在工作日。"


def _coats() -> list[Record]:
    rng = random.Random("ecommerce-zh/coats")
    styles = ("连帽", "立领", "收腰", "茧型", "工装", "拼色", "菱格", "廓形")
    fills = ("90白鸭绒", "90白鹅绒", "80白鸭绒", "95白鹅绒")
    colors = ("曜石黑", "奶油白", "雾霾蓝", "燕麦色", "焦糖棕", "松石绿")
    products = []
    for i in range(28):
        style, fill = rng.choice(styles), rng.choice(fills)
        price = rng.choice((899, 1099, 1299, 1499, 1599, 1899, 2199, 2499, 2899))
        sku = f"YS-{rng.choice(('DJ', 'CK', 'FX'))}{rng.randint(2024, 2026)}-{i:02d}"
        products.append({
            "spu": sku, "title": f"{style}长款羽绒服（{fill}）", "price": float(price),
            "fill": {"material": fill, "weight_g": rng.randint(160, 320)}, "length_cm": rng.randint(98, 122),
            "rating": {"score": round(rng.uniform(4.3, 4.9), 1), "reviews": rng.randint(30, 9000)},
            "variants": [{"sku": f"{sku}-{c}-L", "color": c, "size": "L", "stock": rng.choice((2, 5, 12, 40))}
                         for c in rng.sample(colors, rng.randint(1, 3))],
            "tags": rng.sample(("新品", "热卖", "会员价", "可机洗", "防泼水", "加厚", "轻薄"), 2),
        })
    products[0] = {**products[0], "spu": "YS-DJ2026", "title": "轻暖连帽中长款羽绒服（90白鸭绒）", "price": 1299.0,
                   "fill": {"material": "90白鸭绒", "weight_g": 198}, "length_cm": 102,
                   "variants": [{"sku": "YS-DJ2026-BLK-L", "color": "曜石黑", "size": "L", "stock": 23},
                                {"sku": "YS-DJ2026-WHT-L", "color": "奶油白", "size": "L", "stock": 5}]}
    products[1] = {**products[1], "spu": "YS-DJ2026-LX", "title": "加厚连帽长款羽绒服（90白鹅绒）", "price": 1599.0,
                   "fill": {"material": "90白鹅绒", "weight_g": 286}, "length_cm": 115,
                   "variants": [{"sku": "YS-DJ2026-LX-BLK-L", "color": "曜石黑", "size": "L", "stock": 12}]}
    products[2] = {**products[2], "spu": "YS-FX2026-07", "title": "廓形长款羽绒服（95白鹅绒）", "price": 2199.0,
                   "fill": {"material": "95白鹅绒", "weight_g": 240},
                   "variants": [{"sku": "YS-FX2026-07-OAT-L", "color": "燕麦色", "size": "L", "stock": 7}]}
    return products


def _shop_orders() -> list[Record]:
    rng = random.Random("ecommerce-zh/orders")
    goods = (("针织开衫", 259.0), ("直筒牛仔裤", 329.0), ("羊毛袜三双装", 79.0), ("保暖内衣套装", 199.0),
             ("帆布托特包", 129.0), ("加绒卫衣", 239.0), ("真丝眼罩", 99.0))
    orders = [{"order_id": "DD20261130-8842", "created": "2026-11-30", "status": "已签收", "amount": 1388.0},
              {"order_id": "DD20261112-3307", "created": "2026-11-12", "status": "待发货（预售）", "amount": 459.0,
               "items": [{"name": "复古切尔西短靴", "size": "37", "price": 459.0}]}]
    for _ in range(13):
        day = date(2026, 11, 10) - timedelta(days=rng.randint(0, 50))
        name, price = rng.choice(goods)
        orders.append({"order_id": f"DD{day:%Y%m%d}-{rng.randint(1000, 9999)}", "created": f"{day:%Y-%m-%d}",
                       "status": rng.choice(("已完成", "已完成", "已退款")), "amount": price,
                       "items": [{"name": name, "price": price}]})
    return orders


def ecommerce() -> AgentTrace:
    """A down coat in the wrong size exchanged for another style, then a late pre-sale order cancelled."""
    c = Conversation("ecommerce-zh", SHOP_SYSTEM, named_results=True)
    c.user("你好，我前几天买的羽绒服尺码偏小，想换大一码。订单号是 DD20261130-8842。")
    c.say("您好！可以帮您办理换货。为了核实身份，麻烦告诉我下单时用的手机号。")
    c.user("13816620457。对了我周末不在家，要上门取件的话别约周末。")
    c.act(Call("get_user", {"phone": "13816620457"}, as_json(SHOPPER, ascii_only=True)),
          Call("get_order", {"order_id": "DD20261130-8842"}, COAT_ORDER),
          text="好的，我同时查一下您的账户和这笔订单。")
    c.act(Call("check_stock", {"sku": "YS-DJ2026-HBL-L"},
               {"sku": "YS-DJ2026-HBL-L", "name": "轻暖连帽中长款羽绒服", "color": "雾霾蓝", "size": "L", "stock": 0,
                "warehouses": [{"name": "嘉兴仓", "stock": 0}, {"name": "成都仓", "stock": 0}],
                "restock_date": "2026-12-20",
                "same_size_other_colors": [{"sku": "YS-DJ2026-BLK-L", "color": "曜石黑", "stock": 23},
                                           {"sku": "YS-DJ2026-WHT-L", "color": "奶油白", "stock": 5}]}),
          text="订单里有两件：雾霾蓝M码羽绒服和燕麦灰围巾，12月2日签收，还在7天无理由期内。我看一下雾霾蓝L码的库存。")
    c.say("雾霾蓝L码目前两个仓都没货，预计12月20日补货。同款L码现在有曜石黑（23件）和奶油白（5件）。您可以：\n"
          "1. 换同款其他颜色的L码，不用补差价；\n2. 等12月20日补货后再换；\n3. 换其他款式，差价多退少补。")
    c.user([{"type": "text", "text": "这是吊牌和小票的照片，吊牌都还在。雾霾蓝没了的话，你帮我看看有没有类似的长款，"
                                     "L码，预算不超过3000元。"},
            {"type": "image_url", "image_url": {"url": "https://example.com/receipt.png"}}])
    c.act(Call("search_products", {"keyword": "长款羽绒服", "size": "L", "max_price": 3000, "in_stock_only": True},
               _coats()),
          text="吊牌完好，符合换货条件。我按L码、3000元以内、有货来找。")
    c.say("给您挑了三款L码有货的长款：\n"
          "1. **轻暖连帽中长款**（就是您这款）曜石黑，¥1,299，不用补差价；\n"
          "2. **加厚连帽长款（90白鹅绒）**曜石黑，¥1,599，衣长115cm，充绒286g，比您这件更暖；\n"
          "3. **廓形长款（95白鹅绒）**燕麦色，¥2,199。\n都在3000元预算内。")
    c.user("第二个不错，比我这件厚。差价怎么算？我原来用的满1000减100的券还算吗？")
    c.act(Call("list_coupons", {"user_id": "U88230417"}, [
        {"coupon_id": "CP2026110301", "name": "满1000减100", "status": "已使用", "order_id": "DD20261130-8842"},
        {"coupon_id": "CP2026112015", "name": "会员券 满500减30", "status": "可用", "expires": "2026-12-31"},
        {"coupon_id": "CP2026090288", "name": "满300减20", "status": "已过期", "expires": "2026-10-31"}]))
    c.say("换货是按商品价格补差价：新款¥1,599 − 原款¥1,299 = **¥300**。原订单的满1000减100券继续有效（换货后"
          "订单金额仍满1000），不会被收回；但换货差价不能再用券，会员券满500减30可以留着下次用。")
    c.user("行，就换第二个，差价用支付宝付吧。")
    c.say("跟您确认一下：\n- 订单 DD20261130-8842 中的雾霾蓝M码羽绒服，换成加厚连帽长款 曜石黑L码；\n"
          "- 补差价 ¥300，用支付宝（尾号9921的账户）支付；\n"
          "- 您周末不在家，上门取件约在12月4日（周五）14:00-18:00；取件后新衣服从嘉兴仓发出。\n确认办理吗？")
    c.user("确认")
    c.act(Call("check_stock", {"sku": "YS-DJ2026-LX-BLK-L"},
               {"sku": "YS-DJ2026-LX-BLK-L", "name": "加厚连帽长款羽绒服", "color": "曜石黑", "size": "L", "stock": 12,
                "warehouses": [{"name": "嘉兴仓", "stock": 9}, {"name": "成都仓", "stock": 3}], "restock_date": None}),
          text="好的，下单前再确认一次库存。")
    c.act(Call("create_exchange", {"order_id": "DD20261130-8842", "item_id": "1", "new_sku": "YS-DJ2026-LX-BLK-L",
                                   "reason": "尺码偏小，换款换码", "pickup_slot": "2026-12-04 14:00-18:00",
                                   "payment_id": "alipay_9921"},
               {"exchange_id": "HH20261203-0571", "status": "待取件", "price_difference": 300.0,
                "payment": {"payment_id": "alipay_9921", "status": "已扣款"},
                "pickup": {"company": "顺丰速运", "slot": "2026-12-04 14:00-18:00", "address_id": "A1"},
                "new_item": {"sku": "YS-DJ2026-LX-BLK-L", "warehouse": "嘉兴仓", "ship_after": "取件后24小时内"}}))
    c.act(Call("add_remark", {"order_id": "DD20261130-8842", "remark": WEEKDAYS_ONLY}, ""))
    c.act(Call("send_sms", {"phone": "13816620457", "template": "exchange_created",
                            "params": {"exchange_id": "HH20261203-0571", "pickup": "12月4日 14:00-18:00"}}, ""))
    c.act(Call("get_order", {"order_id": "DD20261130-8842"},
               {**COAT_ORDER, "status": "换货中", "after_sale": [
                   {"exchange_id": "HH20261203-0571", "item_id": "1", "status": "待取件", "remark": WEEKDAYS_ONLY}]}))
    c.say("办好了，换货单号 HH20261203-0571：\n- 差价¥300已从支付宝扣款；\n- 12月4日（周五）14:00-18:00 顺丰上门取件，"
          "请把羽绒服连同吊牌一起打包；\n- 取件后24小时内从嘉兴仓发出新衣服。\n我也在订单上备注了只在工作日取件和派送，"
          "短信已发到您手机。")
    c.user("好的。对了，我上个月还买了一双靴子，到现在都没发货，能帮我看看吗？")
    c.act(Call("list_orders", {"user_id": "U88230417", "days": 60}, _shop_orders()))
    c.act(Call("get_order", {"order_id": "DD20261112-3307"}, {
        "order_id": "DD20261112-3307", "user_id": "U88230417", "created": "2026-11-12 10:02:51",
        "status": "待发货", "presale": {"type": "定金预售", "ship_date": "2026-12-08"},
        "items": [{"item_id": "1", "sku": "YS-XZ1108-BRN-37", "name": "复古切尔西短靴", "color": "焦糖棕", "size": "37",
                   "price": 459.0, "qty": 1}],
        "paid": {"amount": 459.0, "payment_id": "alipay_9921", "time": "2026-11-12 10:03:20"},
        "logistics": None}),
          text="找到了，是11月12日的复古切尔西短靴。我看一下订单详情。")
    c.act(Call("check_stock", {"sku": "YS-XZ1108-BRN-37"},
               {"sku": "YS-XZ1108-BRN-37", "stock": 0, "presale": True, "ship_date": "2026-12-08",
                "warehouses": [{"name": "温州工厂仓", "stock": 0, "in_production": 340}]}))
    c.say("这双靴子是预售款，工厂还在生产，预计12月8日发货，没办法提前。您可以继续等，也可以现在直接取消，"
          "¥459全额退款。")
    c.user("等不了了，我12月6号就要出差。取消吧，钱原路退回就行，别退到余额里。")
    c.act(Call("cancel_order", {"order_id": "DD20261112-3307", "reason": "预售发货晚于顾客出行日期",
                                "refund_to": "original"},
               {"order_id": "DD20261112-3307", "status": "已取消",
                "refund": {"amount": 459.0, "to": "alipay_9921", "eta": "1-3个工作日"}}))
    c.act(Call("add_remark", {"order_id": "DD20261112-3307", "remark": "顾客要求原路退款，不退余额。"}, ""),
          Call("send_sms", {"phone": "13816620457", "template": "order_cancelled",
                            "params": {"order_id": "DD20261112-3307", "amount": "459.00"}}, ""))
    c.say("已取消，¥459会原路退回您的支付宝，1-3个工作日到账，不会退到余额。短信通知也发您了。")
    c.user("好的，谢谢～")
    c.say("不客气！周五取件时记得把吊牌一起寄回，祝您出差顺利。")
    return c.trace("zh", SHOP_TOOLS, given_ids=("DD20261130-8842", "13816620457"),
                   constraints=("别约周末", "预算不超过3000元", "钱原路退回", "别退到余额里"))


# ---------------------------------------------------------------------------------------------------------------
# travel-zh: 旅行预订（机票、高铁比较、酒店、选座、天气、餐厅）

TRIP_SYSTEM = """你是「途远旅行」的智能出行助手，可以查询和预订机票、酒店，查询火车、天气和餐厅。

- 先用会员号查询会员资料；出行人从常用旅客中选择。
- 下单前列出航班或酒店、金额和支付方式，用户确认后再下单。
- 机票价格不含机建燃油：每人每段另收机建¥50、燃油¥20。
- 时间用24小时制；用简体中文回答。"""

TRIP_TOOLS = (
    function("get_member", "会员资料：常用旅客、支付方式、积分和偏好。", {"member_id": prop("string", "会员号")},
             ("member_id",)),
    function("search_flights", "查询某天两城之间的直飞航班（含两地所有机场），按起飞时间排序。",
             {"from_city": prop("string", "出发城市"), "to_city": prop("string", "到达城市"),
              "date": prop("string", "YYYY-MM-DD"), "cabin": prop("string", "舱位", enum=["economy", "business"])},
             ("from_city", "to_city", "date")),
    function("search_trains", "查询某天两城之间的高铁动车。",
             {"from_city": prop("string", "出发城市"), "to_city": prop("string", "到达城市"),
              "date": prop("string", "YYYY-MM-DD")}, ("from_city", "to_city", "date")),
    function("search_hotels", "查询酒店，按距离排序，价格为整段入住的总价。",
             {"city": prop("string", "城市"), "check_in": prop("string", "YYYY-MM-DD"),
              "check_out": prop("string", "YYYY-MM-DD"), "near": prop("string", "地标"),
              "max_total_price": prop("number", "整段入住总价上限（元）")}, ("city", "check_in", "check_out")),
    function("book_flight", "预订机票并支付。",
             {"member_id": prop("string", "会员号"), "flight_id": prop("string", "search_flights 返回的 flight_id"),
              "traveler_ids": prop("array", "出行人", items={"type": "string"}),
              "payment_id": prop("string", "支付方式")}, ("member_id", "flight_id", "traveler_ids", "payment_id")),
    function("select_seat", "为机票订单中的一位旅客选座。",
             {"order_id": prop("string", "机票订单号"), "traveler_id": prop("string", "旅客"),
              "seat": prop("string", "座位号，如 32A")}, ("order_id", "traveler_id", "seat")),
    function("book_hotel", "预订酒店并支付。",
             {"member_id": prop("string", "会员号"), "hotel_id": prop("string", "酒店ID"),
              "room_type": prop("string", "房型"), "check_in": prop("string", "YYYY-MM-DD"),
              "check_out": prop("string", "YYYY-MM-DD"), "guests": prop("array", "入住人", items={"type": "string"}),
              "payment_id": prop("string", "支付方式")},
             ("member_id", "hotel_id", "room_type", "check_in", "check_out", "guests", "payment_id")),
    function("get_weather", "城市逐日天气预报。",
             {"city": prop("string", "城市"), "start_date": prop("string", "YYYY-MM-DD"),
              "end_date": prop("string", "YYYY-MM-DD")}, ("city", "start_date", "end_date")),
    function("search_restaurants", "附近餐厅。",
             {"city": prop("string", "城市"), "near": prop("string", "地标"),
              "max_spicy": prop("integer", "最高辣度 0-3，0为不辣")}, ("city", "near")),
    function("send_itinerary", "把订单行程单发到邮箱。",
             {"email": prop("string", "邮箱"), "order_ids": prop("array", "订单号", items={"type": "string"})},
             ("email", "order_ids")),
)

LIN = {
    "member_id": "TY88172534", "name": "林伟", "level": "金卡", "phone": "139****6620",
    "email": "lin.wei@hengtai-tech.example", "points": 18620, "preferences": {"seat": "过道", "meal": "普通餐"},
    "frequent_travelers": [
        {"traveler_id": "P1", "name": "林伟", "id_type": "身份证", "id_no": "3101**********1234"},
        {"traveler_id": "P2", "name": "周晓雯", "relation": "配偶", "id_type": "身份证", "id_no": "3101**********5628"},
        {"traveler_id": "P3", "name": "林国强", "relation": "父亲", "id_type": "身份证",
         "id_no": "3101**********0315"}],
    "payment_methods": {"alipay_3021": {"source": "alipay", "account": "lin***@163.com"},
                        "credit_card_7447": {"source": "credit_card", "bank": "中国银行", "last_four": "7447"},
                        "wechat_pay_1180": {"source": "wechat_pay"}},
}

AIRLINES = {"MU": "东方航空", "CA": "中国国航", "3U": "四川航空", "FM": "上海航空", "HO": "吉祥航空", "9C": "春秋航空"}
AIRPORTS = {"上海": ("上海虹桥 T2", "上海浦东 T1", "上海浦东 T2"),
            "成都": ("成都天府 T1", "成都天府 T2", "成都双流 T2")}


def _flight(day: str, number: str, frm: str, to: str, depart: str, minutes: int, economy: int, seats: int,
            aircraft: str = "空客A320") -> Record:
    start = datetime.fromisoformat(f"{day} {depart}")
    return {"flight_id": f"{number}-{day[5:7]}{day[8:]}", "flight_no": number, "airline": AIRLINES[number[:2]],
            "from_airport": frm, "to_airport": to, "depart": f"{start:%Y-%m-%d %H:%M}",
            "arrive": f"{start + timedelta(minutes=minutes):%Y-%m-%d %H:%M}", "duration_min": minutes,
            "aircraft": aircraft, "stops": 0, "meal": minutes > 150,
            "price": {"economy": economy, "business": economy * 3 + 420},
            "discount": f"{economy / 1660 * 10:.1f}折", "seats_left": {"economy": seats, "business": 2},
            "on_time_rate": round(0.7 + (seats % 7) * 0.04, 2)}


def _cn_flights(seed: str, day: str, frm: str, to: str, count: int, featured: list[Record]) -> list[Record]:
    rng = random.Random(seed)
    flights = list(featured)
    while len(flights) < count:
        number = f"{rng.choice(tuple(AIRLINES))}{rng.randint(1000, 9899)}"
        depart = f"{rng.randint(6, 22):02d}:{rng.randrange(0, 60, 5):02d}"
        flights.append(_flight(day, number, rng.choice(AIRPORTS[frm]), rng.choice(AIRPORTS[to]), depart,
                               rng.randint(170, 225), rng.randint(1250, 2400), rng.randint(1, 30),
                               rng.choice(("空客A320", "空客A321", "波音737", "空客A330", "C919"))))
    return sorted(flights, key=lambda f: (f["depart"], f["flight_no"]))


OUT_FLIGHTS = _cn_flights("travel-zh/out", "2026-12-14", "上海", "成都", 30, [
    _flight("2026-12-14", "9C8851", "上海浦东 T2", "成都天府 T1", "07:20", 215, 690, 14),
    _flight("2026-12-14", "HO1101", "上海虹桥 T2", "成都天府 T2", "08:35", 205, 760, 6),
    _flight("2026-12-14", "MU5405", "上海虹桥 T2", "成都天府 T1", "10:25", 200, 1180, 9, "空客A330"),
    _flight("2026-12-14", "3U8962", "上海浦东 T2", "成都双流 T2", "13:10", 210, 980, 4)])
BACK_FLIGHTS = _cn_flights("travel-zh/back", "2026-12-18", "成都", "上海", 28, [
    _flight("2026-12-18", "3U8961", "成都双流 T2", "上海浦东 T2", "07:55", 175, 640, 11),
    _flight("2026-12-18", "CA4517", "成都天府 T1", "上海虹桥 T2", "15:40", 180, 1120, 8, "空客A330"),
    _flight("2026-12-18", "MU5408", "成都双流 T2", "上海虹桥 T2", "19:05", 170, 860, 5)])


def _trains() -> list[Record]:
    rng = random.Random("travel-zh/trains")
    trains = []
    for number, depart in (("G1975", "07:52"), ("G1977", "08:36"), ("G2193", "09:10"), ("G1973", "10:02"),
                           ("G1979", "11:18"), ("D954", "19:40")):
        minutes = 692 if number == "G1975" else rng.randint(700, 750) if number[0] == "G" else 1010
        start = datetime.fromisoformat(f"2026-12-18 {depart}")
        second = 1089 if number[0] == "G" else 628
        trains.append({"train_no": number, "from_station": "成都东", "to_station": "上海虹桥",
                       "depart": depart, "arrive": f"{start + timedelta(minutes=minutes):%H:%M}",
                       "next_day": (start + timedelta(minutes=minutes)).day != 18,
                       "duration": f"{minutes // 60}小时{minutes % 60}分",
                       "seats": {"二等座": {"price": second, "left": rng.choice(("有", 12, 5))},
                                 "一等座": {"price": round(second * 1.62), "left": rng.choice(("有", 3, 0))},
                                 "商务座": {"price": round(second * 3.1), "left": rng.choice((1, 2, 0))}}})
    return trains


def _cd_hotels() -> list[Record]:
    rng = random.Random("travel-zh/hotels")
    words = ("锦里", "少城", "青羊", "蜀风", "巷院", "竹间", "芙蓉", "长顺", "金河", "西御")
    kinds = ("精品酒店", "客栈", "酒店", "公寓", "民宿")
    hotels = []
    for i in range(20):
        nightly = rng.randint(240, 740)
        hotels.append({
            "hotel_id": f"CD{rng.randint(100000, 999999)}", "name": f"{rng.choice(words)}{rng.choice(kinds)}",
            "star": rng.choice((3, 4, 4, 5)), "distance_m": 200 + i * 110 + rng.randint(0, 90),
            "price_per_night": nightly, "total_price": nightly * 4,
            "score": round(rng.uniform(4.1, 4.9), 1), "reviews": rng.randint(50, 6800),
            "breakfast": rng.choice(("含双早", "不含早", "含单早")),
            "free_cancel_until": rng.choice(("2026-12-13 18:00", None, "2026-12-12 12:00")),
            "room_types": rng.sample(("大床房", "双床房", "庭院大床房", "家庭房", "行政大床房"), 2),
            "tags": rng.sample(("近地铁", "免费停车", "可寄存行李", "网红打卡", "安静", "有健身房", "川西庭院"), 3),
        })
    hotels[1] = {**hotels[1], "hotel_id": "CD551208", "name": "青瓦台·宽窄精品酒店", "star": 4, "price_per_night": 670,
                 "total_price": 2680, "score": 4.8, "reviews": 3120, "breakfast": "含双早",
                 "free_cancel_until": "2026-12-13 18:00", "room_types": ["庭院大床房", "双床房"],
                 "tags": ["川西庭院", "安静", "近地铁"]}
    return hotels


def _weather() -> list[Record]:
    rng = random.Random("travel-zh/weather")
    sky = ("阴", "多云", "小雨", "阴", "多云转晴")
    return [{"date": f"2026-12-{day}", "weather": sky[day - 14], "temp_high": rng.randint(9, 13),
             "temp_low": rng.randint(4, 7), "humidity": rng.randint(72, 90),
             "aqi": {"value": rng.randint(55, 120), "level": "良"}, "wind": "北风 1-2级"} for day in range(14, 19)]


def _restaurants() -> list[Record]:
    rng = random.Random("travel-zh/restaurants")
    kinds = (("川菜（不辣菜）", ("开水白菜", "鸡豆花", "樟茶鸭", "清汤抄手")),
             ("成都小吃", ("叶儿粑", "三大炮", "清汤龙抄手", "蛋烘糕")), ("粤菜", ("白切鸡", "虾饺", "煲仔饭")),
             ("江浙菜", ("东坡肉", "腌笃鲜", "清蒸鲥鱼")), ("清汤火锅", ("菌汤锅", "番茄锅", "手切鲜牛肉")))
    out = []
    for i in range(15):
        cuisine, dishes = rng.choice(kinds)
        first = rng.choice(("老", "小", "蜀", "宽窄", "巷子"))
        last = rng.choice(("院子", "食堂", "厨房", "人家", "茶馆"))
        out.append({"name": f"{first}{last}{'·' + str(i) + '号店' if rng.random() < 0.2 else ''}",
                    "cuisine": cuisine, "spicy_level": 0, "avg_price": rng.randint(45, 220),
                    "distance_m": rng.randint(80, 1500), "score": round(rng.uniform(4.0, 4.9), 1),
                    "signature_dishes": rng.sample(dishes, 2), "open": "11:00-21:30",
                    "queue": rng.choice(("短", "中", "长"))})
    out[0].update({"name": "少城开水白菜馆", "cuisine": "川菜（不辣菜）", "avg_price": 168, "distance_m": 260,
                   "score": 4.8, "signature_dishes": ["开水白菜", "鸡豆花"], "queue": "中"})
    out[1].update({"name": "龙抄手宽窄店", "cuisine": "成都小吃", "avg_price": 48, "distance_m": 150, "score": 4.6,
                   "signature_dishes": ["清汤龙抄手", "叶儿粑"], "queue": "长"})
    out[2].update({"name": "巷院菌汤锅", "cuisine": "清汤火锅", "avg_price": 132, "distance_m": 540, "score": 4.7,
                   "signature_dishes": ["菌汤锅", "手切鲜牛肉"], "queue": "短"})
    return out


def travel() -> AgentTrace:
    """Shanghai-Chengdu for two: flights searched in parallel, a train compared, a hotel, a six-call booking loop."""
    c = Conversation("travel-zh", TRIP_SYSTEM, named_results=False)
    c.developer("本会话用户为金卡会员：酒店可免费延迟退房至14:00，推荐酒店时请提到；可免费取消的酒店优先推荐。"
                "search_flights 返回的 price 是单人票面价。")
    c.user("你好，帮我安排一下12月去成都的行程，我和我老婆两个人。2026-12-14 出发，周五回来。我的会员号是 TY88172534。")
    c.act(Call("get_member", {"member_id": "TY88172534"}, LIN), text="好的，我先查一下您的会员资料。")
    c.say("林先生您好！常用旅客里有您和周晓雯女士，这次就是你们两位对吧？12月14日是周一，周五是12月18日。请问从哪个城市出发？")
    c.user("对，就我们俩，上海出发，虹桥浦东都行。不要安排早上9点以前的航班，我老婆起不来。酒店总预算不超过3000元，想住宽窄巷子附近。")
    c.act(Call("search_flights", {"from_city": "上海", "to_city": "成都", "date": "2026-12-14", "cabin": "economy"},
               OUT_FLIGHTS),
          Call("search_flights", {"from_city": "成都", "to_city": "上海", "date": "2026-12-18", "cabin": "economy"},
               BACK_FLIGHTS),
          text="收到：12月14日上海→成都，12月18日成都→上海，两位，不坐9点前起飞的航班；酒店4晚总价不超过3000元，靠近宽窄巷子。"
               "我同时查去程和回程。")
    c.say("按9点以后起飞筛了一下（9点前的春秋9C8851 ¥690 和吉祥HO1101 ¥760 便宜些，但太早，已排除）：\n\n"
          "**去程 12月14日（周一）**\n"
          "1. 东航 MU5405 虹桥T2 10:25 → 天府T1 13:45，经济舱 ¥1,180/人\n"
          "2. 川航 3U8962 浦东T2 13:10 → 双流T2 16:40，经济舱 ¥980/人\n\n"
          "**回程 12月18日（周五）**\n"
          "1. 国航 CA4517 天府T1 15:40 → 虹桥T2 18:40，经济舱 ¥1,120/人\n"
          "2. 东航 MU5408 双流T2 19:05 → 虹桥T2 21:55，经济舱 ¥860/人\n\n"
          "以上为票面价，每人每段另加机建燃油¥70。")
    c.user("去程就东航10点25那班。回程能不能坐高铁？想看看沿途风景。")
    c.act(Call("search_trains", {"from_city": "成都", "to_city": "上海", "date": "2026-12-18"}, _trains()))
    c.say("成都东到上海虹桥的高铁最快是 G1975，07:52 出发 19:24 到，也要11小时32分，二等座¥1,089/人，"
          "而且是早上7点多发车；其他高铁都要11小时45分以上，还有一趟D954动卧夜车（19:40开，次日12:30到）。沿途风景确实不错，但比飞机多花大半天。")
    c.user("太久了，那回程还是飞机吧，下午国航那班。")
    c.act(Call("search_hotels", {"city": "成都", "check_in": "2026-12-14", "check_out": "2026-12-18",
                                 "near": "宽窄巷子", "max_total_price": 3000}, _cd_hotels()),
          text="好的，回程定国航 CA4517 15:40。接下来找酒店：12月14日入住、18日退房，共4晚，总价3000元以内。")
    c.say("宽窄巷子附近、4晚总价3000元以内，推荐这家：\n\n"
          "**青瓦台·宽窄精品酒店** 四星，距宽窄巷子约370米，评分4.8（3,120条点评）\n"
          "- 庭院大床房，含双早，¥670/晚，4晚共 **¥2,680**\n"
          "- 12月13日18:00前可免费取消；您是金卡会员，可免费延迟退房到14:00，正好赶15:40的回程航班\n\n"
          "更便宜的也有：锦里精品酒店（460米，4晚¥1,404，含双早）但不能免费取消；蜀风客栈（650米，¥1,364）评分也是4.8，"
          "但不含早。")
    c.user("就住这家吧。行程单发到我邮箱 linwei_sh@163.com，别发公司邮箱。")
    c.say("跟您确认订单：\n"
          "- 去程 MU5405 12月14日 10:25 虹桥T2→天府T1，林伟、周晓雯：¥1,180×2 + 机建燃油¥70×2 = ¥2,500\n"
          "- 回程 CA4517 12月18日 15:40 天府T1→虹桥T2，两位：¥1,120×2 + ¥70×2 = ¥2,380\n"
          "- 酒店 青瓦台·宽窄精品酒店 庭院大床房 12月14日-18日 4晚：¥2,680\n"
          "合计 **¥7,560**。用哪种方式支付？会员资料里有支付宝、中国银行信用卡（尾号7447）和微信支付。")
    c.user("确认，都用支付宝。座位我老婆要靠窗。")
    out_order = {"order_id": "TYF20261203118", "flight_no": "MU5405", "status": "出票中",
                 "passengers": [{"traveler_id": "P1", "name": "林伟"}, {"traveler_id": "P2", "name": "周晓雯"}],
                 "fare": 2360, "taxes": 140, "total": 2500,
                 "payment": {"payment_id": "alipay_3021", "status": "已支付"}}
    back_order = {**out_order, "order_id": "TYF20261203119", "flight_no": "CA4517", "fare": 2240, "total": 2380}
    c.act(Call("book_flight", {"member_id": "TY88172534", "flight_id": "MU5405-1214", "traveler_ids": ["P1", "P2"],
                               "payment_id": "alipay_3021"}, out_order),
          text="好的，先订去程。")
    c.act(Call("book_flight", {"member_id": "TY88172534", "flight_id": "CA4517-1218", "traveler_ids": ["P1", "P2"],
                               "payment_id": "alipay_3021"}, back_order))
    c.act(Call("select_seat", {"order_id": "TYF20261203118", "traveler_id": "P2", "seat": "32A"},
               {"order_id": "TYF20261203118", "traveler_id": "P2", "seat": "32A", "position": "靠窗",
                "companion": {"traveler_id": "P1", "seat": "32B"}}),
          Call("select_seat", {"order_id": "TYF20261203119", "traveler_id": "P2", "seat": "41K"},
               {"order_id": "TYF20261203119", "traveler_id": "P2", "seat": "41K", "position": "靠窗",
                "companion": {"traveler_id": "P1", "seat": "41J"}}),
          text="两段机票都已支付。现在给周女士选靠窗座位，您坐她旁边。")
    c.act(Call("book_hotel", {"member_id": "TY88172534", "hotel_id": "CD551208", "room_type": "庭院大床房",
                              "check_in": "2026-12-14", "check_out": "2026-12-18", "guests": ["P1", "P2"],
                              "payment_id": "alipay_3021"},
               {"order_id": "TYH20261203044", "hotel": "青瓦台·宽窄精品酒店", "room_type": "庭院大床房", "nights": 4,
                "total": 2680, "breakfast": "含双早", "late_checkout": "14:00（金卡权益）",
                "free_cancel_until": "2026-12-13 18:00", "payment": {"payment_id": "alipay_3021",
                                                                     "status": "已支付"}}))
    c.act(Call("send_itinerary", {"email": "linwei_sh@163.com",
                                  "order_ids": ["TYF20261203118", "TYF20261203119", "TYH20261203044"]}, ""))
    c.say("全部订好了：\n- 去程 MU5405，周女士32A靠窗，您32B；\n- 回程 CA4517，周女士41K靠窗，您41J；\n"
          "- 青瓦台·宽窄精品酒店 4晚，含双早，可延迟退房到14:00；\n共支付¥7,560（支付宝）。"
          "行程单已发到 linwei_sh@163.com，没有发公司邮箱。")
    c.user("成都那几天天气怎么样？要带什么衣服？")
    c.act(Call("get_weather", {"city": "成都", "start_date": "2026-12-14", "end_date": "2026-12-18"}, _weather()))
    c.say("12月14-18日成都以阴天多云为主，16日有小雨，白天10℃左右，早晚5-6℃，湿度大，体感比温度更冷。"
          "建议带薄羽绒服或厚外套、毛衣，再带一把折叠伞。")
    c.user("顺便推荐几家宽窄巷子附近的馆子吧，我老婆不吃辣。")
    c.act(Call("search_restaurants", {"city": "成都", "near": "宽窄巷子", "max_spicy": 0}, _restaurants()),
          text="好的，只找完全不辣的。")
    c.say("宽窄巷子附近几家不辣的：\n"
          "1. **少城开水白菜馆**（260米）川菜里的不辣名菜，开水白菜、鸡豆花，人均¥168；\n"
          "2. **龙抄手宽窄店**（150米）清汤抄手、叶儿粑，人均¥48，饭点排队较长；\n"
          "3. **巷院菌汤锅**（540米）清汤菌菇火锅，人均¥132，排队短。\n"
          "点菜时可以跟服务员说“不放辣椒、不放花椒”，成都很多家常菜默认会放一点。")
    c.user("好的，谢谢！到时候有变动再找你。")
    c.say("不客气，祝你们成都玩得开心！行程有变动随时找我。")
    return c.trace("zh", TRIP_TOOLS, given_ids=("TY88172534", "2026-12-14", "linwei_sh@163.com"),
                   constraints=("不要安排早上9点以前的航班", "酒店总预算不超过3000元", "我老婆要靠窗", "我老婆不吃辣"))


# ---------------------------------------------------------------------------------------------------------------
# data-zh: 数据分析（查数仓、约2,000行的查询结果、发现杭州11月11日晚间分区缺失、用 ods 层补算、导出）

DATA_SYSTEM = """你是公司的数据分析助手，连接只读数仓 sales_dw（ClickHouse）。

- 先看表结构再写 SQL；不要对明细表 SELECT *，按需聚合。
- query_db 返回 JSON 行（最多5000行）；需要进一步计算时用 run_python（Python 3，已装 pandas，sql() 执行查询并返回行）。
- 结论要说明数字来自哪张表、什么口径。
- 导出文件只能写到 /data/reports/ 下。"""

DATA_TOOLS = (
    function("list_tables", "列出数据库中的表、行数和注释。", {"database": prop("string", "库名")}, ("database",)),
    function("describe_table", "表结构：字段、类型、注释、分区键和排序键。", {"table": prop("string", "库名.表名")},
             ("table",)),
    function("query_db", "执行只读 SQL，返回 JSON 行。", {"sql": prop("string", "ClickHouse SQL")}, ("sql",)),
    function("run_python", "在沙箱中运行 Python 3 代码，返回标准输出。", {"code": prop("string", "代码")}, ("code",)),
    function("export_csv", "把 SQL 结果导出为 CSV（UTF-8 带 BOM），成功时无输出。",
             {"sql": prop("string", "查询"), "path": prop("string", "/data/reports/ 下的路径")}, ("sql", "path")),
    function("preview_file", "查看文件的前若干行。",
             {"path": prop("string", "文件路径"), "lines": prop("integer", "行数")}, ("path",)),
    function("make_chart", "按规格画图，返回图片地址。",
             {"spec": prop("object", "图表规格：type, x, y, series, source, filter")}, ("spec",)),
)

EAST_CITIES = (("上海", 330), ("杭州", 260), ("苏州", 170), ("南京", 150), ("宁波", 110), ("合肥", 95), ("无锡", 90),
               ("青岛", 92), ("济南", 88), ("福州", 80), ("厦门", 78), ("温州", 70), ("常州", 62), ("南昌", 60),
               ("南通", 58), ("泉州", 56), ("金华", 55), ("绍兴", 52), ("嘉兴", 50), ("徐州", 48), ("台州", 45),
               ("烟台", 44), ("潍坊", 40), ("扬州", 34), ("临沂", 33), ("盐城", 30), ("芜湖", 28), ("湖州", 27),
               ("镇江", 26), ("赣州", 22))
CATEGORIES = (("美妆个护", 0.22, 210), ("服饰鞋包", 0.24, 260), ("家用电器", 0.18, 980), ("食品生鲜", 0.12, 95),
              ("手机数码", 0.16, 1850), ("母婴玩具", 0.08, 180))  # name, share of a city's GMV, average order (元)
DAY_FACTOR = (2.1, 1.2, 1.0, 0.9, 0.95, 1.0, 1.1, 1.05, 1.0, 1.3, 2.0, 3.0)  # 11-01 … 11-11 (index 0 unused)
HOUR_WEIGHTS = {10: (3, 1, 1, 1, 1, 1, 1, 2, 3, 4, 4, 4, 4, 4, 3, 3, 3, 4, 5, 6, 10, 12, 12, 9),
                11: (12, 5, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 10, 11, 10, 8)}
MISSING_HOURS = range(20, 24)  # the load of 杭州's 20:00-24:00 window on 11-11 failed


def _split(total: int, weights: tuple[int, ...]) -> list[int]:
    parts = [total * w // sum(weights) for w in weights]
    parts[-1] += total - sum(parts)
    return parts


def _d11() -> tuple[list[Record], dict[str, tuple[int, int]]]:
    """Every (day, city, category) row as the true figures, and 杭州 11-11's missing evening per category."""
    rng = random.Random("data-zh/d11")
    rows, missing = [], {}
    for day in range(1, 12):
        for city, base in EAST_CITIES:
            for category, share, basket in CATEGORIES:
                gmv_fen = int(base * share * DAY_FACTOR[day] * rng.uniform(0.88, 1.12) * 1_000_000)
                orders = int(gmv_fen / 100 / (basket * rng.uniform(0.9, 1.1)))
                if city == "杭州" and day == 11:
                    weights = HOUR_WEIGHTS[11]
                    kept = sum(_split(gmv_fen, weights)[:MISSING_HOURS.start])
                    kept_orders = sum(_split(orders, weights)[:MISSING_HOURS.start])
                    missing[category] = (gmv_fen - kept, orders - kept_orders)
                    gmv_fen, orders = kept, kept_orders
                rows.append({"dt": f"2026-11-{day:02d}", "city": city, "category": category, "gmv_fen": gmv_fen,
                             "orders": orders})
    return rows, missing


D11_ROWS, HZ_MISSING = _d11()


def _wan(fen: int) -> str:
    return f"{fen / 1_000_000:,.2f}"


def _city_day(city: str, day: str, rows: list[Record] = D11_ROWS) -> tuple[int, int]:
    picked = [r for r in rows if r["city"] == city and r["dt"] == day]
    return sum(r["gmv_fen"] for r in picked), sum(r["orders"] for r in picked)


def _fixed_rows() -> list[Record]:
    return [{**r, "gmv_fen": r["gmv_fen"] + HZ_MISSING[r["category"]][0],
             "orders": r["orders"] + HZ_MISSING[r["category"]][1]} if r["city"] == "杭州" and r["dt"] == "2026-11-11"
            else r for r in D11_ROWS]


def _city_totals(rows: list[Record]) -> list[tuple[str, int, int]]:
    totals: dict[str, list[int]] = {}
    for r in rows:
        total = totals.setdefault(r["city"], [0, 0])
        total[0] += r["gmv_fen"]
        total[1] += r["orders"]
    return sorted(((city, g, o) for city, (g, o) in totals.items()), key=lambda t: -t[1])


def _python_summary(rows: list[Record]) -> str:
    """What the analysis snippet prints: city totals, then four cities' daily GMV (万元)."""
    lines = [f"{'city':<6}{'gmv_wan':>12}{'orders':>10}{'aov':>10}"]
    for city, gmv, orders in _city_totals(rows):
        lines.append(f"{city:<6}{_wan(gmv).replace(',', ''):>12}{orders:>10}{gmv / 100 / orders:>10.2f}")
    lines += ["", f"{'dt':<12}" + "".join(f"{c:>10}" for c in ("上海", "杭州", "苏州", "南京"))]
    for day in range(1, 12):
        dt = f"2026-11-{day:02d}"
        lines.append(f"{dt:<12}" + "".join(f"{_wan(_city_day(c, dt, rows)[0]).replace(',', ''):>10}"
                                           for c in ("上海", "杭州", "苏州", "南京")))
    total = sum(r["gmv_fen"] for r in rows)
    return "\n".join(lines) + f"\n\n华东合计 GMV(万元): {total / 1_000_000:.2f}  行数: {len(rows)}"


def _hourly() -> list[Record]:
    out = []
    for day in (10, 11):
        gmv, orders = _city_day("杭州", f"2026-11-{day}")
        weights = HOUR_WEIGHTS[day]
        if day == 11:  # what dwd holds: the hours before the failed window, whose shares sum to the kept figure
            weights = weights[:MISSING_HOURS.start]
        for hour, (g, o) in enumerate(zip(_split(gmv, weights), _split(orders, weights), strict=True)):
            out.append({"dt": f"2026-11-{day}", "hour": hour, "gmv_fen": g, "orders": o})
    return out


TABLES = ("ads_gmv_daily_city", "ads_gmv_daily_category", "ads_user_retention_weekly", "dim_category", "dim_city",
          "dim_date", "dim_shop", "dim_sku", "dim_user", "dwd_order_detail", "dwd_refund_detail",
          "dwd_payment_detail", "dwd_coupon_use", "dwd_page_view", "dws_city_day", "dws_shop_day", "dws_user_day",
          "etl_job_log", "ods_trade_order", "ods_trade_order_item", "ods_refund", "ods_coupon", "ods_page_view_raw",
          "tmp_d11_presale", "tmp_yx_test")


def _table_list() -> str:
    rng = random.Random("data-zh/tables")
    lines = ["database: sales_dw (ClickHouse 24.8)", "table                          rows            comment"]
    for table in TABLES:
        lines.append(f"{table:<30} {rng.randint(10**3, 10**10):>14,}  {table.split('_')[0]} 层")
    return "\n".join(lines)


def _columns(table: str, partition: str, columns: tuple[tuple[str, str, str], ...]) -> Record:
    return {"table": table, "engine": "ReplicatedMergeTree", "partition_key": partition,
            "columns": [{"name": n, "type": t, "comment": c} for n, t, c in columns]}


ORDER_DETAIL = _columns("sales_dw.dwd_order_detail", "dt", (
    ("dt", "Date", "支付日期分区"), ("order_id", "String", "订单号"), ("order_item_id", "String", "订单行"),
    ("user_id", "UInt64", "买家"), ("shop_id", "UInt32", "店铺"), ("sku_id", "UInt64", "SKU"),
    ("category_id", "UInt32", "末级类目"), ("city_id", "UInt32", "收货城市"), ("pay_time", "DateTime", "支付时间"),
    ("pay_amount_fen", "Int64", "实付金额（分），已扣优惠"), ("coupon_amount_fen", "Int64", "优惠金额（分）"),
    ("order_status", "LowCardinality(String)", "paid/shipped/finished/cancelled/refunded"),
    ("channel", "LowCardinality(String)", "app/mini_program/web"), ("is_presale", "UInt8", "是否预售")))
DIM_CITY = _columns("sales_dw.dim_city", "tuple()", (
    ("city_id", "UInt32", "城市ID"), ("city_name", "String", "城市"), ("province", "String", "省份"),
    ("region", "LowCardinality(String)", "大区"), ("tier", "UInt8", "城市等级")))
DIM_CATEGORY = _columns("sales_dw.dim_category", "tuple()", (
    ("category_id", "UInt32", "末级类目ID"), ("category_l1", "String", "一级类目"),
    ("category_l2", "String", "二级类目"), ("category_l3", "String", "三级类目"), ("is_virtual", "UInt8", "虚拟商品")))

D11_SQL = """SELECT o.dt AS dt, c.city_name AS city, k.category_l1 AS category,
       sum(o.pay_amount_fen) AS gmv_fen, uniqExact(o.order_id) AS orders
FROM sales_dw.dwd_order_detail AS o
INNER JOIN sales_dw.dim_city AS c ON o.city_id = c.city_id
INNER JOIN sales_dw.dim_category AS k ON o.category_id = k.category_id
WHERE o.dt BETWEEN '2026-11-01' AND '2026-11-11'
  AND c.region = '华东' AND o.order_status != 'cancelled' AND k.is_virtual = 0
GROUP BY dt, city, category
ORDER BY dt, city, category"""

ANALYSIS_CODE = '''import pandas as pd

df = pd.DataFrame(sql(D11_SQL))
df["gmv_wan"] = df["gmv_fen"] / 100 / 10000
city = df.groupby("city").agg(gmv_wan=("gmv_wan", "sum"), orders=("orders", "sum"))
city["aov"] = city["gmv_wan"] * 10000 / city["orders"]
print(city.sort_values("gmv_wan", ascending=False).round(2).to_string())
print()
daily = df.pivot_table(index="dt", columns="city", values="gmv_wan", aggfunc="sum")
print(daily[["上海", "杭州", "苏州", "南京"]].round(2).to_string())
print()
print("华东合计 GMV(万元):", round(df["gmv_wan"].sum(), 2), " 行数:", len(df))'''


EXPORT_SQL = """WITH fixed AS (
    SELECT dt, city, category, gmv_fen, orders FROM (
        """ + D11_SQL.replace("\n", "\n        ") + """
    )
    UNION ALL
    SELECT toDate('2026-11-11') AS dt, '杭州' AS city, k.category_l1 AS category,
           sum(i.pay_amount_fen) AS gmv_fen, uniqExact(i.order_id) AS orders
    FROM sales_dw.ods_trade_order_item AS i
    INNER JOIN sales_dw.dim_category AS k ON i.category_id = k.category_id
    WHERE i.dt = '2026-11-11' AND i.city_id = 330100 AND toHour(i.pay_time) >= 20
      AND i.order_status != 'cancelled' AND k.is_virtual = 0
    GROUP BY category
)
SELECT dt AS `日期`, city AS `城市`, category AS `品类`, round(sum(gmv_fen) / 1000000, 2) AS `GMV(万元)`,
       sum(orders) AS `订单数`, round(sum(gmv_fen) / 100 / sum(orders), 2) AS `客单价(元)`
FROM fixed
GROUP BY dt, city, category
ORDER BY dt, city, category"""


def _etl_log() -> list[Record]:
    rng = random.Random("data-zh/etl")
    rows = []
    for city in ("上海", "杭州", "苏州", "南京"):
        for window in ("00:00-06:00", "06:00-12:00", "12:00-20:00", "20:00-24:00"):
            failed = city == "杭州" and window == "20:00-24:00"
            start = datetime(2026, 11, 12, 0, 40) + timedelta(minutes=rng.randint(0, 25))
            end = start + timedelta(minutes=67 if failed else rng.randint(4, 22))
            rows.append({"job": "dwd_order_detail_load", "dt": "2026-11-11", "city": city, "window": window,
                         "status": "failed" if failed else "success",
                         "rows": 0 if failed else rng.randint(200_000, 2_400_000), "attempts": 3 if failed else 1,
                         "started": f"{start:%Y-%m-%d %H:%M:%S}",
                         "finished": f"{end:%Y-%m-%d %H:%M:%S}",
                         "message": "DB::Exception: Too many parts (312). Merges are processing significantly slower "
                                    "than inserts. (TOO_MANY_PARTS)" if failed else ""})
    return rows


def data() -> AgentTrace:
    """A Singles' Day review: ~2,000 rows from one query, a data gap found in a six-call loop, a fix, an export."""
    c = Conversation("data-zh", DATA_SYSTEM, named_results=True)
    c.developer("sales_dw.dwd_order_detail 的金额单位是分（pay_amount_fen）。dim_city.region 取值："
                "华东、华南、华北、华中、西南、西北、东北。dwd 层按 dt 分区，每天 02:00 前完成前一天的数据。")
    report = "/data/reports/d11_review_2026.csv"
    c.user("帮我做个双十一复盘：2026-11-01 到 2026-11-11，各城市、各品类每天的 GMV 和订单数，只看华东区就行。"
           f"最后导出到 {report}。要写代码的话用 Python 3。结论用中文解释，金额单位用万元。")
    c.act(Call("list_tables", {"database": "sales_dw"}, _table_list()), text="好的，先看一下数仓里有哪些表。")
    c.act(Call("describe_table", {"table": "sales_dw.dwd_order_detail"}, ORDER_DETAIL),
          Call("describe_table", {"table": "sales_dw.dim_city"}, DIM_CITY),
          Call("describe_table", {"table": "sales_dw.dim_category"}, DIM_CATEGORY))
    c.act(Call("query_db", {"sql": D11_SQL}, D11_ROWS),
          text="订单明细在 dwd_order_detail（金额单位是分），城市大区和一级类目分别关联 dim_city、dim_category。"
               "按 日期×城市×品类 聚合，去掉已取消订单和虚拟商品。")
    c.act(Call("run_python", {"code": ANALYSIS_CODE}, _python_summary(D11_ROWS)),
          text=f"返回了 {len(D11_ROWS)} 行（11天×30个城市×6个品类）。我用 pandas 汇总一下。")
    top = _city_totals(D11_ROWS)[:3]
    total = sum(r["gmv_fen"] for r in D11_ROWS)
    c.say(f"华东区 11月1日-11日 GMV 合计 **{_wan(total)} 万元**（dwd_order_detail 实付金额，已扣优惠，"
          "不含取消订单和虚拟商品）。\n\n"
          + "".join(f"{i}. {city}：{_wan(g)} 万元，{o:,} 单，客单价 {g / 100 / o:.2f} 元\n"
                    for i, (city, g, o) in enumerate(top, 1))
          + "\n节奏上，11月1日第一波尾款和11月10-11日是两个高峰，中间几天比较平。品类上服饰鞋包和美妆个护贡献最多，"
            "手机数码单量少但客单价最高。")
    c.user("杭州11号那天怎么比10号还低？不太对吧，查一下是不是数据有问题。")
    hz10, hz11 = _city_day("杭州", "2026-11-10")[0], _city_day("杭州", "2026-11-11")[0]
    c.act(Call("query_db", {"sql": "SELECT o.dt AS dt, toHour(o.pay_time) AS hour, sum(o.pay_amount_fen) AS gmv_fen, "
                                   "uniqExact(o.order_id) AS orders\nFROM sales_dw.dwd_order_detail AS o\nINNER JOIN "
                                   "sales_dw.dim_city AS c ON o.city_id = c.city_id\nWHERE o.dt IN ('2026-11-10', "
                                   "'2026-11-11') AND c.city_name = '杭州' AND o.order_status != 'cancelled'\n"
                                   "GROUP BY dt, hour ORDER BY dt, hour"}, _hourly()),
          text=f"确实反常：杭州11日 {_wan(hz11)} 万元，低于10日的 {_wan(hz10)} 万元，而其他城市11日都是最高。"
               "先按小时拆开看。")
    c.act(Call("query_db", {"sql": "SELECT * FROM sales_dw.etl_job_log\nWHERE job = 'dwd_order_detail_load' AND dt = "
                                   "'2026-11-11' AND city IN ('上海', '杭州', '苏州', '南京')\nORDER BY city, window"},
               _etl_log()),
          text="11日只有0-19点的数据，20点以后一行都没有，而10日晚上是全天最高的时段。看一下那天的加载任务日志。")
    ods_hours = [{"hour": h, "ods_orders": o, "dwd_orders": 0}
                 for h, o in zip(MISSING_HOURS, _split(sum(o for _, o in HZ_MISSING.values()),
                                                      HOUR_WEIGHTS[11][MISSING_HOURS.start:]), strict=True)]
    c.act(Call("query_db", {"sql": "SELECT toHour(pay_time) AS hour, count() AS ods_orders, 0 AS dwd_orders\n"
                                   "FROM sales_dw.ods_trade_order\nWHERE dt = '2026-11-11' AND city_id = 330100 AND "
                                   "hour >= 20 AND order_status != 'cancelled'\nGROUP BY hour ORDER BY hour"},
               ods_hours))
    c.act(Call("query_db", {"sql": "SELECT k.category_l1 AS category, sum(i.pay_amount_fen) AS gmv_fen, "
                                   "uniqExact(i.order_id) AS orders\nFROM sales_dw.ods_trade_order_item AS i\nINNER "
                                   "JOIN sales_dw.dim_category AS k ON i.category_id = k.category_id\nWHERE i.dt = "
                                   "'2026-11-11' AND i.city_id = 330100 AND toHour(i.pay_time) >= 20\n  AND "
                                   "i.order_status != 'cancelled' AND k.is_virtual = 0\nGROUP BY category ORDER BY "
                                   "category"},
               [{"category": k, "gmv_fen": g, "orders": o} for k, (g, o) in sorted(HZ_MISSING.items())]))
    c.act(Call("query_db", {"sql": "SELECT c.city_name AS city, uniqExact(toHour(o.pay_time)) AS hours\nFROM "
                                   "sales_dw.dwd_order_detail AS o\nINNER JOIN sales_dw.dim_city AS c ON o.city_id = "
                                   "c.city_id\nWHERE o.dt BETWEEN '2026-11-01' AND '2026-11-11' AND c.region = '华东'\n"
                                   "GROUP BY city, o.dt HAVING hours < 24"}, [{"city": "杭州", "hours": 20}]),
          text="再确认一下别的城市、别的日期有没有同样缺小时的情况。")
    missing = sum(g for g, _ in HZ_MISSING.values())
    c.say("找到原因了，是数据问题，不是业务下滑：\n"
          "- etl_job_log 显示，11月12日凌晨加载 **杭州 11月11日 20:00-24:00** 这个时间窗时，"
          "ClickHouse 报 TOO_MANY_PARTS，重试3次都失败，dwd_order_detail 里这4个小时是空的；"
          "同批次其他城市、其他时间窗都成功了。\n"
          f"- ods 层（ods_trade_order_item）有这4个小时的数据：GMV {_wan(missing)} 万元，"
          f"{sum(o for _, o in HZ_MISSING.values()):,} 单。\n"
          "- 华东其他城市、其他日期都是24小时齐全，只有这一处缺口。\n\n"
          f"补上后杭州11日应为 {_wan(hz11 + missing)} 万元，高于10日，和其他城市的走势一致。"
          "建议通知数仓同学重跑这个分区。")
    c.user("那就用 ods 层的数据把杭州11号补上，然后导出。金额用万元，保留两位小数。顺便出个图。")
    c.act(Call("export_csv", {"sql": EXPORT_SQL, "path": report}, ""),
          text="用 dwd 的结果加上 ods 补的杭州11日20-24点，一起导出。")
    fixed = _fixed_rows()
    head = ["日期,城市,品类,GMV(万元),订单数,客单价(元)"] + [
        f"{r['dt']},{r['city']},{r['category']},{r['gmv_fen'] / 1_000_000:.2f},{r['orders']},"
        f"{r['gmv_fen'] / 100 / r['orders']:.2f}" for r in fixed[:14]]
    c.act(Call("preview_file", {"path": report, "lines": 15}, "\n".join(head)))
    c.act(Call("run_python", {"code": f"import pandas as pd\n\ndf = pd.read_csv({report!r})\nprint(len(df))\n"
                                      "print(df[df['城市'] == '杭州'].groupby('日期')['GMV(万元)'].sum().tail(3))"},
               f"{len(fixed)}\n日期\n" + "\n".join(f"{dt}    {_wan(_city_day('杭州', dt, fixed)[0])}".replace(",", "")
                                                   for dt in ("2026-11-09", "2026-11-10", "2026-11-11"))
               + "\nName: GMV(万元), dtype: float64"))
    c.act(Call("make_chart", {"spec": {"type": "line", "x": "日期", "y": "GMV(万元)", "series": "城市",
                                       "source": report, "filter": {"城市": ["上海", "杭州", "苏州", "南京"]},
                                       "title": "华东重点城市双十一期间每日 GMV（万元）"}},
               {"chart_id": "c_77120", "url": "https://bi.example.com/charts/c_77120.png", "width": 1200,
                "height": 600}))
    fixed_total = sum(r["gmv_fen"] for r in fixed)
    c.say(f"已导出到 {report}，共 {len(fixed)} 行，金额单位万元、保留两位小数。杭州11日补数后为 "
          f"{_wan(hz11 + missing)} 万元。\n\n"
          f"补数后华东区 11月1日-11日 GMV 合计 **{_wan(fixed_total)} 万元**。趋势图："
          "https://bi.example.com/charts/c_77120.png （上海、杭州、苏州、南京四城每日 GMV）。\n\n"
          "注意：导出文件里杭州11日20-24点的数据来自 ods 层，口径与 dwd 一致（实付金额、去掉取消订单和虚拟商品），"
          "但没有经过 dwd 的去重清洗，数仓重跑分区后建议再导一次。")
    c.user("客单价的口径是什么？")
    c.say("客单价 = GMV ÷ 订单数：GMV 是实付金额（已扣优惠券，不含已取消订单），订单数按订单号去重。"
          "已退款的订单还算在里面，因为 dwd_order_detail 里退款单仍是 refunded 状态，没有被排除；"
          "如果要看退款后的净额，需要再关联 dwd_refund_detail 扣掉。")
    c.user("好的，辛苦了")
    c.say("不客气！需要按退款后净额重算的话随时找我。")
    return c.trace("zh", DATA_TOOLS, given_ids=("2026-11-01", report),
                   constraints=("只看华东区", "用 Python 3", "结论用中文解释", "金额单位用万元", "保留两位小数"))


# ---------------------------------------------------------------------------------------------------------------
# bank-zh: 银行客服（信用卡境外盗刷：核验、查交易、冻结、争议、补卡、限额）

BANK_SYSTEM = """你是「华信银行」手机银行的智能客服。

- 任何查询前先核验身份（预留手机号 + 身份证号后四位）。
- 挂失、冻结、解冻前，先和客户确认是哪一张卡；不得透露完整卡号。
- 盗刷争议须在交易日起60天内提出，提交前先冻结涉事卡片；争议受理后临时入账争议金额。
- 补发新卡免费，寄到客户预留地址，5-7个工作日送达。
- 通知方式以客户要求为准。
- 用简体中文回复，金额写人民币符号和千分位，如 ¥1,280.00。"""

BANK_TOOLS = (
    function("verify_identity", "核验客户身份。", {"phone": prop("string", "预留手机号"),
                                              "id_last4": prop("string", "身份证号后四位")}, ("phone", "id_last4")),
    function("get_customer", "客户资料：名下卡片、地址、通知设置。", {"customer_id": prop("string", "客户号")},
             ("customer_id",)),
    function("list_transactions", "某张卡在日期区间内的交易，按时间倒序。",
             {"card_id": prop("string", "卡片ID"), "start_date": prop("string", "YYYY-MM-DD"),
              "end_date": prop("string", "YYYY-MM-DD"), "min_amount": prop("number", "最小金额（元）")},
             ("card_id", "start_date", "end_date")),
    function("get_transaction", "单笔交易详情：授权方式、风控评分、能否争议。",
             {"transaction_id": prop("string", "交易号")}, ("transaction_id",)),
    function("freeze_card", "冻结一张卡，冻结后所有交易被拒绝。",
             {"card_id": prop("string", "卡片ID"), "reason": prop("string", "原因")}, ("card_id", "reason")),
    function("open_dispute", "对交易发起争议（盗刷调查）。",
             {"transaction_ids": prop("array", "交易号", items={"type": "string"}),
              "reason": prop("string", "争议类型", enum=["unauthorized", "not_received", "duplicate", "amount_wrong"]),
              "description": prop("string", "客户陈述")}, ("transaction_ids", "reason", "description")),
    function("get_dispute", "争议进度。", {"dispute_id": prop("string", "争议号")}, ("dispute_id",)),
    function("reissue_card", "挂失补发新卡（换卡号）。",
             {"card_id": prop("string", "旧卡ID"), "address_id": prop("string", "寄送地址")},
             ("card_id", "address_id")),
    function("set_limit", "设置某个渠道的日限额，0 表示关闭。",
             {"card_id": prop("string", "卡片ID"),
              "channel": prop("string", "渠道", enum=["overseas", "online", "atm", "contactless"]),
              "daily_limit": prop("number", "日限额（元）")}, ("card_id", "channel", "daily_limit")),
    function("send_sms", "按模板给客户发短信。",
             {"phone": prop("string", "手机号"), "template": prop("string", "模板ID"),
              "params": prop("object", "模板参数")}, ("phone", "template")),
)

WANG = {
    "customer_id": "C2026093318", "name": "王磊", "phone": "139****0386", "segment": "私人银行潜力客户",
    "cards": {
        "debit_card_5531": {"type": "debit", "product": "华信借记卡", "last_four": "5531", "status": "active",
                            "usage": "代发工资卡", "balance": 42318.66},
        "credit_card_7447": {"type": "credit", "product": "华信白金信用卡", "last_four": "7447", "status": "active",
                             "credit_limit": 50000.0, "available": 41275.3, "statement_day": 5, "due_day": 25,
                             "overseas_enabled": True},
    },
    "addresses": [{"address_id": "ADDR1", "type": "home", "text": "浙江省杭州市西湖区文三路***号"},
                  {"address_id": "ADDR2", "type": "work", "text": "浙江省杭州市滨江区网商路***号"}],
    "notification": {"sms": True, "phone_call": True, "app_push": True},
}

FRAUD = (
    ("T2026111723501", "2026-11-17 23:50:12", 1.0, None, ("GLOBALPAY*TECHMALL", "KUALA LUMPUR", "MY", "5732")),
    ("T2026111723522", "2026-11-17 23:52:40", 1.0, None, ("GLOBALPAY*TECHMALL", "KUALA LUMPUR", "MY", "5732")),
    ("T2026111802143", "2026-11-18 02:14:37", 1280.0, ("MYR", 795.03),
     ("GLOBALPAY*TECHMALL", "KUALA LUMPUR", "MY", "5732")),
    ("T2026111904410", "2026-11-19 04:41:09", 436.5, ("SGD", 81.2), ("GLOBALPAY*DIGISTORE", "SINGAPORE", "SG", "5816")),
)
DAILY_SPEND = (("瑞幸咖啡", "5814", 9, 30), ("美团外卖", "5812", 20, 90), ("滴滴出行", "4121", 12, 70),
               ("盒马鲜生", "5411", 40, 380), ("京东商城", "5311", 30, 1200), ("中国石化", "5541", 200, 420),
               ("全家便利店", "5499", 6, 45),
               ("山姆会员店", "5300", 180, 900), ("携程旅行", "4722", 300, 2600), ("星巴克", "5814", 30, 80))


def _tx(tx_id: str, time: str, amount: float, original: tuple[str, float] | None,
        merchant: tuple[str, str, str, str], channel: str) -> Record:
    name, city, country, mcc = merchant
    return {"transaction_id": tx_id, "time": time, "amount": amount, "currency": "CNY",
            "original": None if original is None else {"currency": original[0], "amount": original[1]},
            "merchant": {"name": name, "city": city, "country": country, "mcc": mcc}, "channel": channel,
            "status": "posted"}


def _card_transactions(start: str, end: str) -> list[Record]:
    rng = random.Random("bank-zh/credit")
    txs = [_tx(*f, "online_cnp") for f in FRAUD]
    day = date(2026, 11, 1)
    while day <= date(2026, 12, 3):
        for _ in range(rng.choice((0, 1, 1, 2))):
            name, mcc, low, high = rng.choice(DAILY_SPEND)
            time = f"{day} {rng.randint(7, 22):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
            txs.append(_tx(f"T{day:%Y%m%d}{rng.randint(10000, 99999)}", time, round(rng.uniform(low, high), 2), None,
                           (name, "杭州", "CN", mcc), rng.choice(("quick_pay", "pos", "online"))))
        day += timedelta(days=1)
    for time, name, amount in (("2026-11-18 08:42:10", "瑞幸咖啡", 19.9), ("2026-11-18 12:15:33", "美团外卖", 46.3),
                               ("2026-11-18 19:20:05", "滴滴出行", 32.1)):
        mcc = next(m for n, m, _, _ in DAILY_SPEND if n == name)
        txs.append(_tx(f"T20261118{int(time[11:13]) * 3 + 10000}", time, amount, None, (name, "杭州", "CN", mcc),
                       "quick_pay"))
    picked = [t for t in txs if start <= t["time"][:10] <= end]
    return sorted(picked, key=lambda t: t["time"], reverse=True)


def _debit_transactions() -> list[Record]:
    rng = random.Random("bank-zh/debit")
    txs = [_tx("D20261110000188", "2026-11-10 09:00:02", 18650.0, None,
               ("代发工资 杭州恒泰科技有限公司", "杭州", "CN", "0000"), "payroll"),
           _tx("D20261115000342", "2026-11-15 06:00:11", -6820.0, None, ("个人住房贷款还款", "杭州", "CN", "6012"),
               "auto_debit"),
           _tx("D20261125000077", "2026-11-25 06:00:05", -8724.7, None,
               ("信用卡自动还款 尾号7447", "杭州", "CN", "6012"), "auto_debit")]
    payees = (("支付宝 余额宝转入", "online"), ("微信零钱充值", "online"), ("国家电网 电费", "auto_debit"),
              ("杭州水务 水费", "auto_debit"), ("转账 王建华", "transfer"), ("ATM 取款", "atm"),
              ("中国移动 话费", "online"))
    for _ in range(24):
        name, channel = rng.choice(payees)
        day = date(2026, 11, 1) + timedelta(days=rng.randint(0, 32))
        txs.append(_tx(f"D{day:%Y%m%d}{rng.randint(100000, 999999)}", f"{day} {rng.randint(7, 22):02d}:"
                       f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}", -round(rng.uniform(30, 3000), 2), None,
                       (name, "杭州", "CN", "4900"), channel))
    return sorted(txs, key=lambda t: t["time"], reverse=True)


def _ledger(card_id: str, start: str, end: str, txs: list[Record]) -> str:
    return as_json({"card_id": card_id, "start_date": start, "end_date": end, "count": len(txs),
                    "transactions": txs}, ascii_only=True)


def bank() -> AgentTrace:
    """Card fraud: identity, a narrow then a wide transaction search, freeze, a dispute, a new card, a limit."""
    c = Conversation("bank-zh", BANK_SYSTEM, named_results=False)
    phone = "13957120386"
    c.user(f"你好，我信用卡好像被盗刷了！2026-11-18 有一笔 ¥1,280 的境外消费，我根本没出过国。我手机号 {phone}。")
    c.say("别着急，我马上帮您处理。为了核实身份，请告诉我您身份证号的后四位。")
    c.user("0427。先说好，别冻结我的储蓄卡，工资卡下周还要发工资。有什么进展短信通知我就行，别打电话，上班不方便接。")
    c.act(Call("verify_identity", {"phone": phone, "id_last4": "0427"},
               as_json({"verified": True, "customer_id": "C2026093318", "name": "王*", "risk_flags": []},
                       ascii_only=True)),
          text="好的，储蓄卡不会动，之后用短信通知您。先核验身份。")
    c.act(Call("get_customer", {"customer_id": "C2026093318"}, as_json(WANG, ascii_only=True)))
    c.act(Call("list_transactions", {"card_id": "credit_card_7447", "start_date": "2026-11-18",
                                     "end_date": "2026-11-18"},
               _ledger("credit_card_7447", "2026-11-18", "2026-11-18", _card_transactions("2026-11-18", "2026-11-18"))),
          text="王先生您好，身份已核验。您名下有一张白金信用卡（尾号7447）和一张借记卡（尾号5531）。我先查11月18日信用卡的交易。")
    c.act(Call("list_transactions", {"card_id": "credit_card_7447", "start_date": "2026-11-01",
                                     "end_date": "2026-12-03"},
               _ledger("credit_card_7447", "2026-11-01", "2026-12-03", _card_transactions("2026-11-01", "2026-12-03"))),
          text="找到这笔了。我再把11月以来的交易都拉出来，看看还有没有别的可疑交易。")
    c.say("查到了：\n"
          "- **11月18日 02:14**，马来西亚吉隆坡 GLOBALPAY*TECHMALL，**¥1,280.00**（外币 MYR 795.03），线上无卡交易。\n"
          "另外还有三笔很可疑：\n"
          "- 11月17日 23:50 和 23:52，同一商户各 ¥1.00，这是盗刷前常见的“试卡”；\n"
          "- 11月19日 04:41，新加坡 GLOBALPAY*DIGISTORE，¥436.50（SGD 81.20）。\n"
          "这三笔也不是您本人的吧？建议马上冻结这张信用卡（尾号7447）；储蓄卡（尾号5531）不受影响。")
    c.user([{"type": "text", "text": "对，都不是我的。这是我当时收到的短信截图。冻结信用卡吧，储蓄卡千万别动。"},
            {"type": "image_url", "image_url": {"url": "https://example.com/sms-alert.png"}}])
    c.act(Call("freeze_card", {"card_id": "credit_card_7447", "reason": "客户报告境外盗刷"},
               as_json({"card_id": "credit_card_7447", "status": "frozen", "frozen_at": "2026-12-03 10:21:44",
                        "note": "冻结后所有交易将被拒绝，可随时解冻"}, ascii_only=True)),
          text="截图里的短信和交易记录对得上。只冻结尾号7447的信用卡。")
    detail = {"auth": {"3ds": "not_performed", "entry": "card_not_present", "ip_country": "MY"},
              "risk": {"score": 87, "rules_hit": ["foreign_cnp_night", "card_testing_pattern"]},
              "dispute_eligible": True, "dispute_deadline": "2027-01-17"}
    c.act(Call("get_transaction", {"transaction_id": "T2026111802143"},
               as_json({**_tx(*FRAUD[2], "online_cnp"), **detail}, ascii_only=True)),
          Call("get_transaction", {"transaction_id": "T2026111904410"},
               as_json({**_tx(*FRAUD[3], "online_cnp"), **detail, "dispute_deadline": "2027-01-18"},
                       ascii_only=True)))
    c.act(Call("open_dispute", {"transaction_ids": [f[0] for f in FRAUD], "reason": "unauthorized",
                                "description": "客户称未进行 2026-11-18 的 ¥1,280 境外消费及 11月17日两笔 ¥1.00、"
                                               "11月19日 ¥436.50 的交易，本人未出境，卡片一直在身边。"},
               as_json({"dispute_id": "DP20261203-0117", "status": "受理中", "amount": 1718.5,
                        "provisional_credit": {"amount": 1718.5, "posted": "2026-12-03"},
                        "expected_resolution": "2027-01-17", "network": "银联国际"}, ascii_only=True)),
          text="两笔大额交易都没有经过3DS验证，风控评分87，都在争议期内。现在一起提交盗刷争议。")
    c.act(Call("reissue_card", {"card_id": "credit_card_7447", "address_id": "ADDR1"},
               as_json({"old_card": "credit_card_7447", "new_card_last_four": "9083", "status": "制卡中", "fee": 0,
                        "delivery": {"method": "EMS", "eta": "5-7个工作日", "address_id": "ADDR1"}}, ascii_only=True)))
    c.act(Call("send_sms", {"phone": phone, "template": "dispute_opened",
                            "params": {"dispute_id": "DP20261203-0117", "amount": "1,718.50", "new_card": "9083"}}, ""))
    c.say("已经处理好了：\n"
          "1. 信用卡（尾号7447）已冻结，储蓄卡没有动；\n"
          "2. 争议单 DP20261203-0117 已受理，4笔共 ¥1,718.50，今天已临时入账到信用卡，预计2027年1月17日前出结果；\n"
          "3. 新卡（尾号9083）免费补发，寄到您家庭地址，5-7个工作日送达；\n"
          "4. 以上信息已短信发到您手机，没有打电话。")
    c.user("境外交易能不能直接关掉？我基本不出国。新卡也关掉。")
    c.act(Call("set_limit", {"card_id": "credit_card_7447", "channel": "overseas", "daily_limit": 0},
               "已设置：尾号7447 境外交易日限额 ¥0（关闭）。补发新卡（尾号9083）将继承该设置。"))
    c.say("已关闭境外交易，新卡到手后也是关闭状态。以后要出国，在手机银行“卡片管理”里打开就行。")
    c.user("争议一般多久有结果？那 ¥1,718.50 会不会影响我这个月还款？")
    c.act(Call("get_dispute", {"dispute_id": "DP20261203-0117"},
               as_json({"dispute_id": "DP20261203-0117", "status": "受理中", "amount": 1718.5,
                        "timeline": [{"time": "2026-12-03 10:24:10", "event": "争议受理"},
                                     {"time": "2026-12-03 10:24:11", "event": "临时入账 ¥1,718.50"},
                                     {"time": "2026-12-03 10:30:00", "event": "已向银联国际发起调单"}],
                        "expected_resolution": "2027-01-17", "statement_effect": "12月账单中争议交易不计入最低还款额"},
                       ascii_only=True)))
    c.say("一般30-45天出结果，最晚2027年1月17日。这 ¥1,718.50 已经临时退回到您的信用卡，12月5日出的账单里这几笔争议交易"
          "不计入最低还款额，所以不影响您按时还款，也不会产生利息。如果调查确认是盗刷，临时入账就转为正式退款。")
    c.user("最后帮我看看储蓄卡最近有没有异常，不要动它，看看就行。")
    c.act(Call("list_transactions", {"card_id": "debit_card_5531", "start_date": "2026-11-01",
                                     "end_date": "2026-12-03"},
               _ledger("debit_card_5531", "2026-11-01", "2026-12-03", _debit_transactions())),
          text="好的，只查询，不做任何操作。")
    c.say("储蓄卡（尾号5531）11月以来的交易都很正常：11月10日工资 ¥18,650.00 到账，11月15日房贷 ¥6,820.00，"
          "11月25日信用卡自动还款，其余是水电、话费、充值、转账和取款，没有境外交易，也没有陌生商户。卡片状态正常，没有冻结。")
    c.user("好的，谢谢你")
    c.say("不客气，王先生。新卡寄出后会短信通知您，有任何问题随时找我。")
    return c.trace("zh", BANK_TOOLS, given_ids=(phone, "2026-11-18", "¥1,280"),
                   constraints=("别冻结我的储蓄卡", "短信通知我就行", "别打电话"))
