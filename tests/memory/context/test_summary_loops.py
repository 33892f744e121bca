"""What compaction keeps of a tool loop and of what the user gave in passing, and the span's whole text in parts:
every call named with its arguments and finding, user-given identifiers through twenty compactions, every message
reachable under the item size limit. English and Chinese, the real tokenizer."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from memory.config import LimitsConfig
from memory.context import parse_messages
from memory.context.compaction import linked, span_texts
from memory.context.identifiers import identifiers
from memory.context.summary import GIVEN, SECTIONS, Summary, summarise
from memory.tokens import TokenCounter
from tests.memory.context.chat import call

# A task item's key as long as one can be: a task id of 128 characters, "/r" and its number.
LONGEST_KEY = "t" * 128 + "/r1234567890"


def loop(calls: list[tuple[str, dict[str, Any], str]], ask: str) -> list[dict[str, Any]]:
    """A user message, then one assistant call and its tool answer per (tool, arguments, result)."""
    out: list[dict[str, Any]] = [{"role": "user", "content": ask}]
    for i, (tool, arguments, result) in enumerate(calls):
        out.append({"role": "assistant", "content": None,
                    "tool_calls": [call(f"c{i}", tool, json.dumps(arguments, ensure_ascii=False))]})
        out.append({"role": "tool", "tool_call_id": f"c{i}", "content": result})
    return out


def log(path: str, minute: int) -> str:
    """A long log (about ten thousand tokens) with one ERROR line in it."""
    noise = [f"2026-12-01 10:{minute:02d}:{s % 60:02d} INFO worker-{s % 7} served request {s} in {s % 90} ms"
             for s in range(700)]
    noise.insert(400, f"2026-12-01 10:{minute:02d}:11 ERROR db timeout after 30 s reading {path}")
    return "\n".join(noise)


LOGS = ["/var/log/app.log", "/var/log/db.log", "/var/log/worker.log", "/var/log/nginx/error.log",
        "/var/log/app.log.1", "/var/log/cron.log"]
TAIL_LOG = loop([("tail_log", {"path": p, "lines": 200}, log(p, i)) for i, p in enumerate(LOGS)],
                "The app crashes every few minutes; find out why.")

USER = {"user_id": "mia_li_3668", "name": {"first_name": "Mia", "last_name": "Li"},
        "email": "mia.li3668@example.com", "membership": "gold",
        "payment_methods": {"credit_card_4421": {"source": "credit_card", "brand": "visa", "last_four": "4421"},
                            "certificate_7504": {"source": "certificate", "amount": 250}},
        "saved_passengers": [{"first_name": "Amelia", "last_name": "Ahmed", "dob": "1957-03-21"}],
        "reservations": ["NO6JO3", "AIXC49", "K1NW8N"]}


def reservation(rid: str, flight: str) -> dict[str, Any]:
    return {"reservation_id": rid, "user_id": "mia_li_3668", "origin": "SFO", "destination": "JFK",
            "flight_type": "one_way", "cabin": "economy",
            "flights": [{"flight_number": flight, "date": "2024-05-20", "price": 523, "origin": "SFO"}],
            "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}],
            "payment_history": [{"payment_id": "credit_card_4421", "amount": 523}], "insurance": "no"}


FLIGHTS = [{"flight_number": f"HAT{n:03d}", "origin": "SFO", "destination": "JFK", "status": "available",
            "available_seats": {"economy": n}, "prices": {"economy": 100 + n}} for n in (41, 57, 263)]
TAU = loop([("get_user_details", {"user_id": "mia_li_3668"}, json.dumps(USER)),
            *(("get_reservation_details", {"reservation_id": r}, json.dumps(reservation(r, f)))
              for r, f in (("NO6JO3", "HAT001"), ("AIXC49", "HAT170"), ("K1NW8N", "HAT045"))),
            ("search_direct_flight", {"origin": "SFO", "destination": "JFK", "date": "2024-05-20"},
             json.dumps(FLIGHTS))],
           "I want to move my flight to May 20. My user id is mia_li_3668.")
ORDER = {"订单号": "DD20261130-8842", "状态": "已发货", "物流单号": "SF1234567890", "金额": "1299元", "收件人": "李伟"}
TRACKING = "\n".join(["2026-11-30 18:00 快件 SF1234567890 已揽收", "2026-12-01 09:00 快件 SF1234567890 到达上海转运中心",
                      "2026-12-01 21:00 快件 SF1234567890 派送中"])
CHINESE = loop([("查询订单", {"订单号": "DD20261130-8842"}, json.dumps(ORDER, ensure_ascii=False)),
                ("查询物流", {"物流单号": "SF1234567890"}, TRACKING)],
               "我的快递怎么还没到？订单号是 DD20261130-8842。")


def lines(summary: Summary) -> tuple[str, ...]:
    return summary.sections["Tool calls"]


def fits(summary: Summary, counter: TokenCounter, budget: int) -> bool:
    return summary.tokens == counter.count(summary.text) <= budget


def test_the_tail_log_loop_names_each_call_its_path_and_the_error_it_found(counter: TokenCounter) -> None:
    messages = parse_messages(TAIL_LOG)
    assert sum(counter.count(m.content) for m in messages) > 50_000
    summary = summarise(messages, counter, 800, references=["loop-1/r7"])
    assert len(lines(summary)) == len(LOGS)
    for line, (i, path) in zip(lines(summary), enumerate(LOGS), strict=True):
        assert line.startswith(f'tail_log {{"path": "{path}", "lines": 200}} → 1 ERROR line: ')
        assert f'"2026-12-01 10:{i:02d}:11 ERROR db timeout after 30 s reading {path}"' in line
    assert "### Tool calls" in summary.text and summary.sections["References"] == ("loop-1/r7",)
    assert fits(summary, counter, 800)


def test_the_tau_loop_names_every_tool_its_arguments_and_the_ids_it_found(counter: TokenCounter) -> None:
    summary = summarise(parse_messages(TAU), counter, 1500, references=["t1/r2"])
    user, *reservations, search = lines(summary)
    assert user.startswith('get_user_details {"user_id": "mia_li_3668"} → ')
    for ident in ("mia_li_3668", "credit_card_4421", "certificate_7504", "NO6JO3", "AIXC49", "K1NW8N"):
        assert ident in user.split(" → ")[1], ident
    for line, (rid, flight) in zip(reservations, (("NO6JO3", "HAT001"), ("AIXC49", "HAT170"), ("K1NW8N", "HAT045")),
                                   strict=True):
        head, found = line.split(" → ")
        assert head == f'get_reservation_details {{"reservation_id": "{rid}"}}'
        assert rid in found and flight in found and "mia_li_3668" in found
    assert search.startswith('search_direct_flight {"origin": "SFO", "destination": "JFK", "date": "2024-05-20"} → 3 '
                             'items: ')
    assert all(f in search for f in ("HAT041", "HAT057", "HAT263"))
    assert fits(summary, counter, 1500)


def test_the_chinese_loop_names_the_order_and_the_tracking_number(counter: TokenCounter) -> None:
    summary = summarise(parse_messages(CHINESE), counter, 600, references=["t1/r3"])
    order, tracking = lines(summary)
    assert order.startswith('查询订单 {"订单号": "DD20261130-8842"} → ')
    assert "DD20261130-8842" in order and "SF1234567890" in order and "1299元" in order
    assert tracking.startswith('查询物流 {"物流单号": "SF1234567890"} → ') and "SF1234567890" in tracking.split(" → ")[1]
    assert "DD20261130-8842" in summary.sections[GIVEN]
    assert fits(summary, counter, 600)


def test_a_repeated_call_is_one_line_with_its_count_and_a_retried_failure_is_left_out(counter: TokenCounter) -> None:
    raw = loop([("tail_log", {"path": "/var/log/app.log"}, "Error: permission denied"),
                ("tail_log", {"path": "/var/log/app.log", "lines": 50}, log("/var/log/app.log", 3)),
                ("get_reservation_details", {"reservation_id": "NO6JO3"}, json.dumps(reservation("NO6JO3", "HAT001"))),
                ("get_reservation_details", {"reservation_id": "NO6JO3"}, json.dumps(reservation("NO6JO3", "HAT002"))),
                ("list_dir", {"path": "/tmp/empty"}, "  ")], "Check the app.")
    summary = summarise(parse_messages(raw), counter, 1000)
    tail, repeated, empty = lines(summary)
    assert tail.startswith('tail_log {"path": "/var/log/app.log", "lines": 50} → 1 ERROR line')
    assert repeated.startswith('get_reservation_details {"reservation_id": "NO6JO3"} ×2 → ') and "HAT002" in repeated
    assert empty == 'list_dir {"path": "/tmp/empty"} → (empty)'
    assert ("messages[1]: tail_log", "failed, tried again later") in summary.dropped


@pytest.mark.parametrize(("budget", "most"), [(150, 330), (300, 610), (1000, 810)])
def test_long_arguments_are_cut_and_the_finding_is_short(counter: TokenCounter, budget: int, most: int) -> None:
    raw = loop([("search", {"query": "x" * 500, "ids": list(range(50))}, " ".join(f"ORD-{n}" for n in range(3000)))],
               "Search.")
    [line] = lines(summarise(parse_messages(raw), counter, budget))
    shown, found = line.split(" → ")
    assert len(shown) < 140 and "…" in shown and len(found) <= most and found.startswith("ORD-0, ORD-1")


@pytest.mark.parametrize("budget", [150, 250])
def test_a_short_budget_keeps_the_most_salient_calls_written_in_call_order(counter: TokenCounter,
                                                                           budget: int) -> None:
    messages = parse_messages(TAIL_LOG)
    later = parse_messages([{"role": "user", "content": "What did the nginx error log say?"}])
    summary = summarise(messages, counter, budget, later=later, query="nginx error log")
    kept = lines(summary)
    assert kept and len(kept) < len(LOGS) and any("/var/log/nginx/error.log" in k for k in kept)
    calls = [line.split(" → ")[0] for line in kept]  # a line that does not fit whole is cut
    assert calls == [c for c in (line.split(" → ")[0] for line in lines(summarise(messages, counter, 2000)))
                     if c in calls]
    assert fits(summary, counter, budget)


def test_spans_without_calls_have_no_tool_calls_section(counter: TokenCounter) -> None:
    summary = summarise(parse_messages([{"role": "assistant", "content": "I fixed the parser."}]), counter, 200)
    assert "### Tool calls" not in summary.text and summary.sections["Tool calls"] == ()
    assert [line[4:] for line in summary.text.splitlines() if line.startswith("### ")] == \
        [name for name in SECTIONS if summary.sections[name]]


FIRST = {
    "en": ["Hi! A parcel of mine is late. My order number is ZX-48213-Q if you need it later.",
           "The invoice is at /home/mia/docs/invoice-2291.pdf and the tracking page is "
           "https://track.example.com/p/ZX-48213-Q by the way.",
           "You can mail me at mia.li@example.com. I paid $1,249.99 for it."],
    "zh": ["你好，我的快递一直没到。订单号是 DD20261130-8842 ，之后可能用得上。",
           "发票在 /home/liwei/文档/发票-8842.pdf ，物流页面是 https://wuliu.example.cn/track/DD20261130-8842 。",
           "有问题可以发邮件到 li.wei@example.cn ，我付了 1299元。"],
}
GIVEN_IDS = {
    "en": {"ZX-48213-Q", "/home/mia/docs/invoice-2291.pdf", "https://track.example.com/p/ZX-48213-Q",
           "mia.li@example.com", "$1,249.99"},
    "zh": {"DD20261130-8842", "/home/liwei/文档/发票-8842.pdf", "https://wuliu.example.cn/track/DD20261130-8842",
           "li.wei@example.cn", "1299元"},
}
CHATTER = {
    "en": (["Thanks, what about the weather there?", "OK, and the next one?", "Sounds good, go on."],
           ["I decided to use the cached forecast for step {k} instead of a fresh call.",
            "Done: wrote the notes for round {k} to /srv/notes/round-{k}.md and deployed v{k}.0.{r}.",
            "The forecast service failed with error E{k}{r}; next I need to retry it."]),
    "zh": (["谢谢，那边天气怎么样？", "好的，下一个呢？", "听起来不错，继续吧。"],
           ["我决定第{k}步用缓存的预报，不用重新查询。",
            "已完成：第{k}轮的笔记已写入 /srv/notes/round-{k}.md ，版本 v{k}.0.{r}。",
            "预报服务报错 E{k}{r}，下一步还需要重试。"]),
}


def span(language: str, k: int) -> list[dict[str, Any]]:
    """About thirty messages: the user's identifiers in the first span only, chatter, decisions, steps and calls."""
    users, assistants = CHATTER[language]
    out: list[dict[str, Any]] = []
    for r in range(6):
        said = FIRST[language][r] if k == 0 and r < len(FIRST[language]) else users[r % len(users)]
        out.append({"role": "user", "content": said})
        out.append({"role": "assistant", "content": assistants[r % 3].format(k=k, r=r)})
        out += loop([("get_weather", {"city": f"city-{k}-{r}"},
                      json.dumps({"city": f"city-{k}-{r}", "station": f"ST{k}{r}X9", "temp_c": 12}))], "")[1:]
        out.append({"role": "assistant", "content": assistants[(r + 1) % 3].format(k=k, r=r)})
    return out


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("budget", [300, 400])
def test_what_the_user_gave_survives_twenty_compactions(counter: TokenCounter, language: str, budget: int) -> None:
    stated = {i.text for m in FIRST[language] for i in identifiers(m)}
    assert stated == GIVEN_IDS[language]
    summary = None
    for k in range(20):
        messages = parse_messages(span(language, k) + span(language, k + 1)[:1])
        spanned, later = messages[:-1], messages[-1:]
        assert 28 <= len(spanned) <= 32
        summary = summarise(spanned, counter, budget, references=[f"t1/r{k + 1}"],
                            prior=summary.sections if summary is not None else None, later=later, first=0,
                            last=len(spanned) - 1)
        assert fits(summary, counter, budget)
        for ident in stated:
            assert ident in summary.text, (k, ident)
    assert summary is not None
    assert set(summary.sections[GIVEN]) == stated
    assert set(summary.sections[GIVEN]) <= set(summary.sections["Key data"])
    assert summary.sections["References"][-1] == "t1/r20"


def test_given_identifiers_are_cut_newest_first_only_when_they_alone_exceed_the_budget(
        counter: TokenCounter) -> None:
    prior = {GIVEN: tuple(f"ORDER-{n:05d}-X" for n in range(60))}
    summary = summarise(parse_messages([{"role": "user", "content": "My new order is ORDER-99999-Z."}]), counter,
                        200, prior=prior, references=["t1/r9"])
    kept = summary.sections[GIVEN]
    assert kept[-1] == "ORDER-99999-Z" and "ORDER-00059-X" in kept and "ORDER-00000-X" not in kept
    assert list(kept) == [g for g in (*prior[GIVEN], "ORDER-99999-Z") if g in kept]  # written in the order given
    assert summary.sections["References"] == ("t1/r9",) and fits(summary, counter, 200)


def heads(part: str) -> list[int]:
    return [int(i) for i in re.findall(r"^messages\[(\d+)\] (?:user|assistant|tool)", part, re.MULTILINE)]


@pytest.mark.parametrize(("raw", "limit"), [(TAU, 2_000), (CHINESE, 500)], ids=["english", "chinese"])
def test_span_texts_keep_every_message_in_exactly_one_part_within_the_limit(raw: list[dict[str, Any]],
                                                                            limit: int) -> None:
    messages = parse_messages(raw)
    parts = span_texts(messages, "t1/r1", limit=limit)
    assert len(parts) > 1 and parts[0].endswith("\n[the messages before these: task item t1/r1]")
    assert all(len(linked(p, LONGEST_KEY)) <= limit for p in parts[1:]) and len(parts[0]) <= limit
    found = [i for p in parts for i in heads(p)]
    assert sorted(found) == [m.index for m in messages]  # each once, in order
    assert found == sorted(found)


def test_span_texts_write_an_offloaded_result_as_its_key() -> None:
    messages = parse_messages(TAIL_LOG)
    offloaded = {m.index: f"t1/r{m.index}" for m in messages if m.role == "tool"}
    [part] = span_texts(messages, offloaded=offloaded, limit=LimitsConfig().max_text_chars)
    assert "INFO worker" not in part and part.count("[the whole text is task item t1/r") == len(LOGS)
    assert 'tail_log({"path": "/var/log/db.log", "lines": 200})' in part and heads(part) == [m.index for m in messages]


@pytest.mark.parametrize("text", ["x" * 3_000_000, ("日志第一行\n" + "数" * 200) * 14_000], ids=["english", "chinese"])
def test_a_message_over_the_limit_is_cut_into_parts_that_put_it_back_together(text: str) -> None:
    limit = LimitsConfig().max_text_chars
    messages = parse_messages([{"role": "user", "content": "Read this."}, {"role": "assistant", "content": text},
                               {"role": "user", "content": "Thanks."}])
    parts = span_texts(messages, "t1/r1", limit=limit)
    assert len(parts) >= 2 and all(len(linked(p, LONGEST_KEY)) <= limit for p in parts)
    assert [i for p in parts for i in heads(p)] == [0, 1, 2]
    assert whole(parts) == f"messages[0] user:\nRead this.\n\nmessages[1] assistant:\n{text}\n\nmessages[2] user:\nThanks."


def whole(parts: list[str]) -> str:
    """The span's text put back together from its parts: the link lines left out, a continued message joined."""
    out = ""
    for part in parts:
        part = re.sub(r"\n\[the messages before these: task item [^\]]+\]\Z", "", part)
        head, _, rest = part.partition("\n")
        out += rest if head.endswith("(continued):") else ("\n\n" if out else "") + part
    return out


def test_span_texts_refuse_a_limit_with_no_room_for_the_link() -> None:
    with pytest.raises(ValueError, match="limit must leave"):
        span_texts(parse_messages([{"role": "user", "content": "hi"}]), limit=100)
