"""The English conversations of bench.agent_traces: travel booking, a coding agent, an IT help desk, order support."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from itertools import pairwise
from typing import Any

from bench.agent_traces import AgentTrace, Call, Conversation, as_json, function, prop

__all__ = ["traces"]

Record = dict[str, Any]


def traces() -> tuple[AgentTrace, ...]:
    """travel-en, coding-en, helpdesk-en, orders-en."""
    return travel(), coding(), helpdesk(), orders()


# ---------------------------------------------------------------------------------------------------------------
# travel-en: a travel agency's booking assistant (flights, seats, a hotel, a cancellation)

TRAVEL_SYSTEM = """You are the booking assistant of Skyward Travel. You help signed-in customers search, book, change \
and cancel flights and hotels.

- Look the customer up by user id before anything else.
- Before any action that charges or refunds money, list what will happen and the total, and wait for an explicit yes.
- Pay only with methods in the customer's profile: at most one gift card and one card per booking, and a gift card \
never pays more than its balance.
- Travel insurance is $38 per passenger per trip. Offer it once; never add it without consent.
- Basic economy cannot be changed; it can be cancelled for travel credit.
- Make one call at a time unless the calls do not depend on each other.
- If the customer asks for something these tools cannot do, offer a transfer to a human agent."""

TRAVEL_TOOLS = (
    function("get_user_details", "The customer's profile: name, contact, payment methods, saved passengers and "
             "reservation ids.", {"user_id": prop("string", "the customer's user id, such as 'sara_doe_496'")},
             ("user_id",)),
    function("search_flights", "Itineraries for one direction on one date, nonstop and one-stop, with fares per "
             "cabin.", {"origin": prop("string", "IATA code of the departure airport"),
                        "destination": prop("string", "IATA code of the arrival airport"),
                        "date": prop("string", "departure date, YYYY-MM-DD"),
                        "cabin": prop("string", "cabin to price", enum=["basic_economy", "economy",
                                                                         "premium_economy", "business"]),
                        "fare_code": prop("string", "a corporate fare code, if the account has one")},
             ("origin", "destination", "date")),
    function("search_hotels", "Hotels with free rooms for the whole stay, nearest first.",
             {"city": prop("string", "city name"), "check_in": prop("string", "YYYY-MM-DD"),
              "check_out": prop("string", "YYYY-MM-DD"), "near": prop("string", "a landmark or address"),
              "radius_km": prop("number", "how far from `near`"),
              "max_nightly_rate": prop("number", "in the hotel's currency")}, ("city", "check_in", "check_out")),
    function("get_seat_map", "Seat availability on one flight.",
             {"flight_number": prop("string", "such as 'MR211'"), "date": prop("string", "YYYY-MM-DD")},
             ("flight_number", "date")),
    function("book_flight", "Book itineraries for passengers; charges the payment methods in the order given.",
             {"user_id": prop("string", "the customer's user id"),
              "itinerary_ids": prop("array", "ids from search_flights", items={"type": "string"}),
              "cabin": prop("string", "cabin of every segment"),
              "passengers": prop("array", "who flies", items={"type": "object", "properties": {
                  "first_name": {"type": "string"}, "last_name": {"type": "string"},
                  "date_of_birth": {"type": "string"}}}),
              "payment": prop("array", "payment methods and amounts, charged in order", items={
                  "type": "object", "properties": {"payment_id": {"type": "string"}, "amount": {"type": "number"}}}),
              "insurance": prop("boolean", "add travel insurance ($38 per passenger)"),
              "loyalty_number": prop("string", "the airline loyalty number to credit")},
             ("user_id", "itinerary_ids", "cabin", "passengers", "payment", "insurance")),
    function("assign_seat", "Assign a seat to a passenger on one flight of a reservation.",
             {"reservation_id": prop("string", "six characters"), "flight_number": prop("string", "the flight"),
              "passenger": prop("string", "full name"), "seat": prop("string", "such as '14C'")},
             ("reservation_id", "flight_number", "passenger", "seat")),
    function("book_hotel", "Book a room for a stay and charge one payment method.",
             {"user_id": prop("string", "the customer's user id"), "hotel_id": prop("string", "from search_hotels"),
              "check_in": prop("string", "YYYY-MM-DD"), "check_out": prop("string", "YYYY-MM-DD"),
              "room_type": prop("string", "a room type the hotel offers"),
              "payment_id": prop("string", "a payment method id from the profile")},
             ("user_id", "hotel_id", "check_in", "check_out", "room_type", "payment_id")),
    function("get_reservation", "One flight reservation.",
             {"reservation_id": prop("string", "six characters")}, ("reservation_id",)),
    function("cancel_reservation", "Cancel a flight reservation; basic economy is refunded as travel credit.",
             {"reservation_id": prop("string", "six characters"), "reason": prop("string", "why, in a few words")},
             ("reservation_id", "reason")),
    function("add_trip_note", "Attach a note for human agents to a reservation.",
             {"reservation_id": prop("string", "six characters"), "note": prop("string", "the note")},
             ("reservation_id", "note")),
    function("send_itinerary", "E-mail the itineraries of reservations.",
             {"email": prop("string", "recipient address"),
              "reservation_ids": prop("array", "flight and hotel reservation ids", items={"type": "string"})},
             ("email", "reservation_ids")),
)

MAYA = {
    "user_id": "maya_okafor_3391",
    "name": {"first_name": "Maya", "last_name": "Okafor"},
    "email": "maya.okafor@fastmail.com",
    "phone": "+1 617 555 0193",
    "address": {"address1": "41 Cedar Street", "address2": "Apt 3", "city": "Somerville", "state": "MA",
                "zip": "02143", "country": "USA"},
    "date_of_birth": "1988-04-17",
    "membership": "gold",
    "seat_preference": "window",
    "payment_methods": {
        "gift_card_6120": {"source": "gift_card", "id": "gift_card_6120", "balance": 180.0, "expires": "2027-06-30"},
        "credit_card_4242": {"source": "credit_card", "id": "credit_card_4242", "brand": "visa", "last_four": "4242",
                             "expires": "2029-03"},
        "credit_card_7447": {"source": "credit_card", "id": "credit_card_7447", "brand": "mastercard",
                             "last_four": "7447", "expires": "2026-12"},
    },
    "saved_passengers": [{"first_name": "Daniel", "last_name": "Okafor", "date_of_birth": "1986-09-02"}],
    "reservations": ["K3LM0P", "8JX2TQ", "R7D1WA"],
}

# Minutes from UTC, and block times in minutes eastbound (westbound flies 35 minutes longer).
AIRPORT_OFFSET = {"BOS": -300, "JFK": -300, "EWR": -300, "YYZ": -300, "PDL": -60, "DUB": 0, "LIS": 0, "MAD": 60}
BLOCK = {("BOS", "LIS"): 390, ("BOS", "JFK"): 75, ("JFK", "LIS"): 405, ("BOS", "EWR"): 85, ("EWR", "LIS"): 400,
         ("BOS", "YYZ"): 95, ("YYZ", "LIS"): 420, ("BOS", "PDL"): 300, ("PDL", "LIS"): 130, ("BOS", "DUB"): 380,
         ("DUB", "LIS"): 170, ("BOS", "MAD"): 420, ("MAD", "LIS"): 80}
CARRIERS = {"MR": "Meridian Air", "ZA": "Azul Atlântico", "NS": "NorthStar Airways", "HB": "Harbor Jet"}
AIRCRAFT = ("A321neo", "A330-900", "B737-8", "B787-9", "A220-300")


def _block(frm: str, to: str) -> int:
    return BLOCK.get((frm, to)) or BLOCK[(to, frm)] + 35


def _local(date: str, utc_minutes: int, airport: str) -> str:
    moment = datetime.fromisoformat(date) + timedelta(minutes=utc_minutes + AIRPORT_OFFSET[airport])
    return moment.strftime("%Y-%m-%dT%H:%M")


def _itinerary(date: str, route: tuple[str, ...], numbers: tuple[str, ...], depart: str, layover: int,
               economy: int, seats: int, aircraft: str) -> Record:
    """One itinerary over `route` (two or three airports), leaving at local time `depart` on `date`."""
    hours, minutes = map(int, depart.split(":"))
    clock = hours * 60 + minutes - AIRPORT_OFFSET[route[0]]
    start, segments = clock, []
    for (frm, to), number in zip(pairwise(route), numbers, strict=True):
        arrive = clock + _block(frm, to)
        segments.append({"flight_number": number, "carrier": CARRIERS[number[:2]], "from": frm, "to": to,
                         "depart": _local(date, clock, frm), "arrive": _local(date, arrive, to),
                         "aircraft": aircraft})
        clock = arrive + layover
    overnight = segments[-1]["arrive"][:10] != date and hours >= 17
    return {"itinerary_id": f"{route[0]}{route[-1]}-{date[5:7]}{date[8:]}-{'-'.join(numbers)}",
            "segments": segments, "stops": len(segments) - 1, "duration_min": clock - layover - start,
            "overnight": overnight, "fare_code": "NWL26",
            "fares": {"basic_economy": {"price": round(economy * 0.86), "seats_left": max(seats - 5, 1),
                                        "changeable": False, "checked_bags": 0},
                      "economy": {"price": economy, "seats_left": seats, "changeable": True, "checked_bags": 1},
                      "premium_economy": {"price": round(economy * 1.72), "seats_left": 4, "changeable": True,
                                          "checked_bags": 2}}}


def _flights(seed: str, date: str, origin: str, destination: str, count: int,
             featured: dict[int, Record]) -> list[Record]:
    rng = random.Random(seed)
    hubs = ("JFK", "EWR", "YYZ", "PDL", "DUB", "MAD")
    out = []
    for i in range(count):
        if i in featured:
            out.append(featured[i])
            continue
        carrier = rng.choice(tuple(CARRIERS))
        hub = rng.choice((None, *hubs))
        route = (origin, destination) if hub is None else (origin, hub, destination)
        numbers = tuple(f"{carrier}{rng.randint(10, 1999)}" for _ in route[1:])
        depart = f"{rng.randint(6, 23):02d}:{rng.randrange(0, 60, 5):02d}"
        out.append(_itinerary(date, route, numbers, depart, rng.randint(55, 240), rng.randint(420, 1180),
                              rng.randint(1, 14), rng.choice(AIRCRAFT)))
    return out


OUTBOUND = _flights("travel-en/out", "2026-12-14", "BOS", "LIS", 20, {
    0: _itinerary("2026-12-14", ("BOS", "LIS"), ("NS88",), "21:50", 0, 389, 12, "B787-9"),
    3: _itinerary("2026-12-14", ("BOS", "LIS"), ("MR211",), "09:05", 0, 468, 9, "A321neo"),
    11: _itinerary("2026-12-14", ("BOS", "PDL", "LIS"), ("ZA102", "ZA415"), "07:40", 80, 441, 6, "A321neo"),
})
RETURN = _flights("travel-en/back", "2026-12-19", "LIS", "BOS", 17, {
    2: _itinerary("2026-12-19", ("LIS", "BOS"), ("MR212",), "11:20", 0, 518, 7, "A321neo"),
    9: _itinerary("2026-12-19", ("LIS", "PDL", "BOS"), ("ZA416", "ZA103"), "12:50", 75, 472, 5, "A321neo"),
})


def _hotels() -> list[Record]:
    rng = random.Random("travel-en/hotels")
    first = ("Oriente", "Vasco", "Marina", "Olivais", "Moscavide", "Tejo", "Gare", "Sacavém", "Lumiar", "Cabo Ruivo")
    kind = ("Hotel", "Suites", "Apartments", "Inn", "Residence")
    amenities = ("wifi", "breakfast", "gym", "pool", "parking", "airport_shuttle", "laundry", "bar", "spa")
    hotels = []
    for i in range(14):
        name = f"{rng.choice(first)} {rng.choice(('Parque', 'Rio', 'Nações', 'Sul'))} {rng.choice(kind)}"
        hotels.append({
            "hotel_id": f"LIS-H-{rng.randint(1000, 4999)}", "name": name, "stars": rng.choice((3, 3, 3, 4, 4)),
            "distance_km": round(1.1 + i * 0.14 + rng.random() * 0.1, 1),
            "nightly_rate": {"amount": rng.randint(98, 179), "currency": "EUR"},
            "rating": {"score": round(rng.uniform(7.1, 9.3), 1), "reviews": rng.randint(80, 3200)},
            "address": {"street": f"Rua {rng.choice(('do Mar Vermelho', 'da Pimenta', 'Ilha dos Amores'))} "
                                  f"{rng.randint(1, 90)}", "district": "Parque das Nações", "city": "Lisbon"},
            "amenities": sorted(rng.sample(amenities, rng.randint(2, 6))),
            "room_types": ["standard_double", "standard_king"] + (["junior_suite"] if rng.random() < 0.4 else []),
            "cancellation": {"free_until": "2026-12-12", "penalty_nights": 1},
        })
    hotels[2] = {**hotels[2], "hotel_id": "LIS-H-2207", "name": "Tejo Riverside Hotel", "stars": 4,
                 "distance_km": 1.4, "nightly_rate": {"amount": 162, "currency": "EUR"},
                 "rating": {"score": 9.4, "reviews": 2140}, "room_types": ["standard_double", "standard_king"],
                 "amenities": ["breakfast", "gym", "wifi"]}
    return hotels


def _seat_map(seed: str, flight_number: str, date: str, fixed: dict[str, str]) -> Record:
    rng = random.Random(seed)
    rows = []
    for row in range(7, 37):
        seats = {letter: rng.choice(("open", "taken", "taken", "taken")) for letter in "ABCDEF"}
        seats.update({seat[-1]: state for seat, state in fixed.items() if int(seat[:-1]) == row})
        rows.append({"row": row, "type": "economy_plus" if row < 12 else "economy", "exit": row in (14, 27),
                     "seats": seats})
    return {"flight_number": flight_number, "date": date, "aircraft": "A321neo", "layout": "ABC-DEF", "rows": rows}


def travel() -> AgentTrace:
    """A Boston-Lisbon trip: profile, flight and hotel searches, a booking loop with seats, a cancellation."""
    c = Conversation("travel-en", TRAVEL_SYSTEM, named_results=False)
    c.developer("This session is on Northwind Labs' corporate account. Pass fare code NWL26 to every flight search. "
                "Northwind reimburses long-haul economy up to $1,100 per round trip and hotels up to €190 a night; "
                "say so when an option is over.")
    c.user("Hi! I need to get to Lisbon for a conference in December. My user id is maya_okafor_3391. Oh, and my "
           "Meridian Miles number is MM-778-20931, in case you need it for the booking later.")
    c.act(Call("get_user_details", {"user_id": "maya_okafor_3391"}, MAYA),
          text="Hi Maya! Let me pull up your profile first.")
    c.say("Thanks, Maya, I have your profile. Where are you flying from, on which dates, and in which cabin?")
    c.user("From Boston, leaving 2026-12-14 and coming back on the 19th. Economy is fine. Please no red-eyes, I "
           "can't sleep on planes and I present the morning after I land. Also, I don't want travel insurance, my "
           "card already covers it.")
    c.act(Call("search_flights", {"origin": "BOS", "destination": "LIS", "date": "2026-12-14", "cabin": "economy",
                                  "fare_code": "NWL26"}, OUTBOUND),
          Call("search_flights", {"origin": "LIS", "destination": "BOS", "date": "2026-12-19", "cabin": "economy",
                                  "fare_code": "NWL26"}, RETURN),
          text="Got it: Boston to Lisbon on Monday, December 14, back on Saturday, December 19, economy, no "
               "overnight flights and no insurance. I'll search both directions at once.")
    c.say("Here are the best daytime options with your Northwind fare code. I left out the overnight departures, "
          "including a cheaper $389 NorthStar red-eye.\n\n"
          "**Outbound, Mon Dec 14 (BOS → LIS)**\n"
          "1. Meridian Air MR211, nonstop, 09:05 → 20:35, economy $468 (9 seats left)\n"
          "2. Azul Atlântico ZA102 + ZA415 via Ponta Delgada, 07:40 → 21:10, economy $441\n\n"
          "**Return, Sat Dec 19 (LIS → BOS)**\n"
          "1. Meridian Air MR212, nonstop, 11:20 → 13:25, economy $518\n"
          "2. Azul Atlântico ZA416 + ZA103 via Ponta Delgada, 12:50 → 17:25, economy $472\n\n"
          "The two Meridian nonstops come to $986 round trip, under Northwind's $1,100 cap, and they earn Meridian "
          "Miles. Would you like those, or the cheaper one-stops via the Azores ($913)?")
    c.user([{"type": "text", "text": "Nonstop both ways, please. Does that fit our travel policy? Here's the page "
                                     "from our handbook."},
            {"type": "image_url", "image_url": {"url": "https://example.com/northwind-travel-policy.png"}}])
    c.say("Yes. The handbook page allows long-haul economy up to $1,100 per round trip with the NWL26 code, and "
          "hotels up to €190 a night, so the Meridian nonstops at $986 fit. Would you like a hotel as well?")
    c.user("Yes please, near the conference venue, FIL (Feira Internacional de Lisboa) in Parque das Nações. Under "
           "€180 a night, I'd rather not argue with finance.")
    hotel_search = {"city": "Lisbon", "check_in": "2026-12-14", "check_out": "2026-12-19",
                    "near": "FIL Feira Internacional de Lisboa", "max_nightly_rate": 180}
    c.act(Call("search_hotels", {**hotel_search, "radius_km": 1}, "[]"))
    c.act(Call("search_hotels", {**hotel_search, "radius_km": 3}, _hotels()),
          text="Nothing under €180 within 1 km of FIL for those nights; widening the search to 3 km.")
    c.say("Three good options within 3 km of FIL, all under €180 a night for December 14-19 (5 nights):\n\n"
          "1. **Tejo Riverside Hotel** ★★★★, 1.4 km, €162/night (€810), breakfast and gym, rated 9.4 by 2,140 "
          "guests\n"
          "2. **Cabo Ruivo Rio Inn** ★★★★, 1.3 km, €119/night (€595), breakfast and gym, rated 9.0\n"
          "3. **Vasco Nações Apartments** ★★★, 1.2 km, €143/night (€715), breakfast, pool, rated 8.3\n\n"
          "All three cancel free until December 12. The Tejo Riverside is the best rated; the Cabo Ruivo is the "
          "best value.")
    c.user("The Tejo Riverside sounds good. For payment, use the gift card first, then the Visa ending 4242. Not "
           "the Mastercard, it expires this month.")
    c.say("Here's what I'll book:\n\n"
          "- **Flights**: MR211 on Dec 14 and MR212 on Dec 19, economy, for Maya Okafor, fare code NWL26, "
          "crediting Meridian Miles MM-778-20931. Total $986: $180 from gift card 6120 (its whole balance), then "
          "$806 on the Visa ending 4242. No travel insurance.\n"
          "- **Hotel**: Tejo Riverside Hotel, standard king, Dec 14-19 (5 nights), €810 on the Visa ending 4242 "
          "(the flights use up the gift card). Free cancellation until Dec 12.\n\n"
          "Shall I go ahead?")
    c.user("Yes, go ahead. Aisle seats if you can, and send the itinerary to my work address, "
           "maya.okafor@northwind-labs.com, not the one on file.")
    booking = {"reservation_id": "QF7K2M", "status": "confirmed", "user_id": "maya_okafor_3391",
               "flights": [{"flight_number": "MR211", "date": "2026-12-14", "from": "BOS", "to": "LIS",
                            "depart": "2026-12-14T09:05", "arrive": "2026-12-14T20:35"},
                           {"flight_number": "MR212", "date": "2026-12-19", "from": "LIS", "to": "BOS",
                            "depart": "2026-12-19T11:20", "arrive": "2026-12-19T13:25"}],
               "cabin": "economy", "passengers": [{"first_name": "Maya", "last_name": "Okafor",
                                                   "date_of_birth": "1988-04-17"}],
               "payment_history": [{"payment_id": "gift_card_6120", "amount": 180.0},
                                   {"payment_id": "credit_card_4242", "amount": 806.0}],
               "insurance": False, "loyalty_number": "MM-778-20931", "fare_code": "NWL26", "total": 986.0,
               "created_at": "2026-11-30T15:42:08Z"}
    c.act(Call("book_flight", {"user_id": "maya_okafor_3391",
                               "itinerary_ids": [OUTBOUND[3]["itinerary_id"], RETURN[2]["itinerary_id"]],
                               "cabin": "economy", "passengers": booking["passengers"],
                               "payment": booking["payment_history"], "insurance": False,
                               "loyalty_number": "MM-778-20931"}, booking),
          text="Booking the flights now.")
    c.act(Call("get_seat_map", {"flight_number": "MR211", "date": "2026-12-14"},
               _seat_map("travel-en/seats-out", "MR211", "2026-12-14", {"14C": "open"})),
          Call("get_seat_map", {"flight_number": "MR212", "date": "2026-12-19"},
               _seat_map("travel-en/seats-back", "MR212", "2026-12-19", {"22D": "open", "23C": "open"})))
    seat = {"reservation_id": "QF7K2M", "passenger": "Maya Okafor"}
    c.act(Call("assign_seat", {**seat, "flight_number": "MR211", "seat": "14C"},
               {**seat, "flight_number": "MR211", "seat": "14C", "status": "assigned"}),
          text="Flights confirmed (reservation QF7K2M). Aisle 14C is free on MR211, and 22D on MR212.")
    c.act(Call("assign_seat", {**seat, "flight_number": "MR212", "seat": "22D"},
               "Error: seat 22D on MR212 2026-12-19 is no longer available."))
    c.act(Call("assign_seat", {**seat, "flight_number": "MR212", "seat": "23C"},
               {**seat, "flight_number": "MR212", "seat": "23C", "status": "assigned"}),
          text="22D was taken a moment ago; 23C is the next free aisle seat.")
    c.act(Call("book_hotel", {"user_id": "maya_okafor_3391", "hotel_id": "LIS-H-2207", "check_in": "2026-12-14",
                              "check_out": "2026-12-19", "room_type": "standard_king",
                              "payment_id": "credit_card_4242"},
               {"hotel_reservation_id": "HT-58120", "hotel": {"hotel_id": "LIS-H-2207", "name": "Tejo Riverside "
                "Hotel"}, "stay": {"check_in": "2026-12-14", "check_out": "2026-12-19", "nights": 5},
                "room_type": "standard_king", "charge": {"payment_id": "credit_card_4242", "amount": 810.0,
                                                         "currency": "EUR"},
                "breakfast": True, "cancellation": {"free_until": "2026-12-12"}}))
    c.act(Call("add_trip_note", {"reservation_id": "QF7K2M", "note": "Customer declined travel insurance. Wants "
                                 "aisle seats on this trip although her profile says window."}, ""))
    c.act(Call("send_itinerary", {"email": "maya.okafor@northwind-labs.com",
                                  "reservation_ids": ["QF7K2M", "HT-58120"]}, ""))
    c.say("All booked, Maya:\n\n"
          "- Flights QF7K2M: MR211 Dec 14, 09:05 → 20:35, seat 14C; MR212 Dec 19, 11:20 → 13:25, seat 23C (22D "
          "went just before I could take it). $180 from the gift card, $806 on the Visa ending 4242, no insurance, "
          "Meridian Miles credited.\n"
          "- Hotel HT-58120: Tejo Riverside Hotel, Dec 14-19, standard king with breakfast, €810 on the Visa.\n\n"
          "The itinerary is on its way to maya.okafor@northwind-labs.com.")
    c.user("Perfect, thank you! One more thing: I think my Chicago trip K3LM0P overlaps with this. Can you check?")
    c.act(Call("get_reservation", {"reservation_id": "K3LM0P"}, {
        "reservation_id": "K3LM0P", "user_id": "maya_okafor_3391", "origin": "BOS", "destination": "ORD",
        "flight_type": "round_trip", "cabin": "basic_economy",
        "flights": [{"flight_number": "HB1182", "date": "2026-12-17", "from": "BOS", "to": "ORD",
                     "depart": "2026-12-17T07:15", "arrive": "2026-12-17T09:02", "price": 109},
                    {"flight_number": "HB1191", "date": "2026-12-20", "from": "ORD", "to": "BOS",
                     "depart": "2026-12-20T17:40", "arrive": "2026-12-20T21:05", "price": 105}],
        "passengers": [{"first_name": "Maya", "last_name": "Okafor", "date_of_birth": "1988-04-17"}],
        "payment_history": [{"payment_id": "credit_card_7447", "amount": 214.0}], "insurance": False,
        "status": "confirmed", "created_at": "2026-11-02T18:20:41Z"}))
    c.say("It does. K3LM0P is Boston → Chicago O'Hare on Thursday, Dec 17, back Sunday, Dec 20, basic economy, $214 "
          "paid with the Mastercard ending 7447, and you'll be in Lisbon until the 19th. Basic economy can't be "
          "changed, but I can cancel it: you'd get the $214 back as travel credit, not on the card. Cancel it?")
    c.user("Ugh. Yes, cancel it, credit is fine.")
    c.act(Call("cancel_reservation", {"reservation_id": "K3LM0P", "reason": "schedule conflict with Lisbon trip"},
               {"reservation_id": "K3LM0P", "status": "cancelled",
                "refund": {"type": "travel_credit", "amount": 214.0, "code": "TC-K3LM0P-214",
                           "valid_until": "2027-11-30"}}))
    c.say("Done: K3LM0P is cancelled, and $214 of travel credit (code TC-K3LM0P-214, valid until November 30, "
          "2027) is on your account. Anything else?")
    c.user("Can I use that credit on a Meridian flight too?")
    c.say("Yes, the credit works on any airline Skyward sells, Meridian included, as long as you book before "
          "November 30, 2027. It can't pay for hotels.")
    c.user("Great, that's all. Thanks!")
    c.say("Have a great conference, Maya! Your flights, seats and hotel are in your inbox at work.")
    return c.trace("en", TRAVEL_TOOLS, given_ids=("maya_okafor_3391", "MM-778-20931", "2026-12-14",
                                                  "maya.okafor@northwind-labs.com"),
                   constraints=("no red-eyes", "I don't want travel insurance",
                                "use the gift card first, then the Visa ending 4242", "Under €180 a night",
                                "Aisle seats"))


# ---------------------------------------------------------------------------------------------------------------
# coding-en: a coding agent finds why a nightly ingest fails (logs, files, a CSV), patches, tests, opens a PR

CODING_SYSTEM = """You are a coding agent working in the repository at /srv/ingestd, a Python service that loads \
carrier shipment feeds into Postgres. Your tools list directories, read files, search code, tail logs, run tests, \
apply unified-diff patches and open pull requests.

- Read before you change: find the failing code path in the logs and the source first.
- Make the smallest change that fixes the problem, and add a regression test.
- Run the relevant tests after every patch; never claim a fix the tests have not confirmed.
- Paths are relative to the repository root unless they start with /."""

CODING_TOOLS = (
    function("list_dir", "Entries of a directory, one per line, directories ending in /.",
             {"path": prop("string", "directory path")}, ("path",)),
    function("read_file", "A text file with line numbers, whole or a range of lines.",
             {"path": prop("string", "file path"), "start_line": prop("integer", "first line, 1-based"),
              "end_line": prop("integer", "last line, inclusive")}, ("path",)),
    function("search_code", "Lines matching a regular expression, as path:line:text. Empty when nothing matches.",
             {"pattern": prop("string", "a Python regular expression"),
              "glob": prop("string", "which files, such as 'ingestd/**/*.py'")}, ("pattern",)),
    function("tail_log", "The last lines of a log file, optionally only those containing a string.",
             {"path": prop("string", "log file path"), "lines": prop("integer", "how many lines (max 500)"),
              "grep": prop("string", "keep only lines containing this")}, ("path", "lines")),
    function("run_tests", "Run pytest on a target and return its output.",
             {"target": prop("string", "a test file, directory or node id"),
              "extra_args": prop("string", "more pytest arguments")}, ("target",)),
    function("apply_patch", "Apply a unified diff to the workspace.",
             {"patch": prop("string", "the diff, with ---/+++ headers")}, ("patch",)),
    function("open_pull_request", "Push the workspace to a new branch and open a pull request against main.",
             {"title": prop("string", "one line"), "body": prop("string", "markdown"),
              "branch": prop("string", "new branch name")}, ("title", "body", "branch")),
)

PARSE_PY = '''"""Parsing one feed row into a shipment event."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal

from ingestd.feeds import Feed


@dataclass(frozen=True)
class Event:
    shipment_id: str
    feed: str
    kind: str
    event_ts: datetime
    hub: str
    weight_kg: Decimal


def parse_ts(text: str) -> datetime:
    value = datetime.fromisoformat(text)
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def parse_row(raw: dict[str, str], feed: Feed) -> Event:
    return Event(
        shipment_id=raw["shipment_id"].strip(),
        feed=feed.name,
        kind=feed.event_kinds.get(raw["event"], raw["event"]),
        event_ts=parse_ts(raw["event_ts"]),
        hub=raw["hub"].upper(),
        weight_kg=Decimal(raw["weight_kg"] or "0"),
    )
'''

PIPELINE_PY = '''"""One batch: claim it, parse its rows, copy them into Postgres, or move the file to spool/failed."""

from __future__ import annotations

import csv
import logging
import shutil
import time
from pathlib import Path

from ingestd import db
from ingestd.feeds import Feed, load_feeds
from ingestd.parse import Event, parse_row

log = logging.getLogger(__name__)

RETRIES = 3
BACKOFF_SECONDS = (2, 10, 30)
SPOOL = Path("/srv/ingestd/spool")


def read_rows(path: Path, feed: Feed) -> list[Event]:
    with path.open(newline="", encoding=feed.encoding) as handle:
        reader = csv.DictReader(handle, delimiter=feed.delimiter)
        return [parse_row(r, feed) for r in reader]


def run_batch(batch: str, feed_name: str) -> int:
    feed = load_feeds()[feed_name]
    path = SPOOL / "incoming" / f"{batch}.csv"
    for attempt in range(1, RETRIES + 1):
        try:
            rows = read_rows(path, feed)
            with db.connect() as conn:
                copied = db.copy_events(conn, rows)
            log.info("batch=%s feed=%s rows=%d copied=%d", batch, feed.name, len(rows), copied)
            return copied
        except ValueError as exc:
            log.warning("batch=%s feed=%s attempt %d/%d failed: %s", batch, feed.name, attempt, RETRIES, exc)
            if attempt == RETRIES:
                log.exception("batch=%s feed=%s failed after %d retries", batch, feed.name, RETRIES)
                shutil.move(path, SPOOL / "failed" / path.name)
                raise
            time.sleep(BACKOFF_SECONDS[attempt - 1])
    return 0
'''

PIPELINE_YAML = """# Feeds the nightly ingest loads; one worker per feed group.
defaults:
  delimiter: ","
  encoding: utf-8
  timestamp_format: iso8601
  max_rows_per_batch: 5000

feeds:
  dhl-eu:
    group: eu
    source: sftp://feeds.example.net/dhl/eu/
    event_kinds: {PU: picked_up, DL: delivered, EX: exception}
  gls:
    group: eu
    source: sftp://feeds.example.net/gls/
    delimiter: ";"
    encoding: latin-1
  ups-de:
    group: eu
    source: https://api.example.net/ups/de/events
  parcelwise:
    group: eu
    source: https://api.parcelwise.example/v2/exports
    # v2 export since 2026-11-29 (was v1)
    event_kinds: {collected: picked_up, handover: in_transit, pod: delivered}
"""


def _line(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def _numbered(text: str, start: int = 1, end: int | None = None) -> str:
    lines = text.splitlines()[start - 1:end]
    return "\n".join(f"{i:>5}\t{line}" for i, line in enumerate(lines, start))


def _traceback(batch: str) -> list[str]:
    value = "1796004" + str(100123 + int(batch[-4:]) * 3)
    return [
        "Traceback (most recent call last):",
        f'  File "/srv/ingestd/ingestd/pipeline.py", line {_line(PIPELINE_PY, "rows = read_rows(")}, in run_batch',
        "    rows = read_rows(path, feed)",
        "           ^^^^^^^^^^^^^^^^^^^^",
        f'  File "/srv/ingestd/ingestd/pipeline.py", line {_line(PIPELINE_PY, "return [parse_row(")}, in read_rows',
        "    return [parse_row(r, feed) for r in reader]",
        f'  File "/srv/ingestd/ingestd/parse.py", line {_line(PARSE_PY, "event_ts=parse_ts(")}, in parse_row',
        '    event_ts=parse_ts(raw["event_ts"]),',
        f'  File "/srv/ingestd/ingestd/parse.py", line {_line(PARSE_PY, "value = datetime.fromisoformat")}, '
        "in parse_ts",
        "    value = datetime.fromisoformat(text)",
        f"ValueError: Invalid isoformat string: '{value}'",
    ]


def _worker_log(worker: int, first_batch: int, batches: int, rotation: int) -> list[str]:
    """A worker's log from 01:58 UTC: ordinary batches, and every parcelwise batch from 0142 on failing."""
    rng = random.Random(f"coding-en/worker-{worker}")
    clock = datetime(2026, 11, 30, 1, 58, 0)
    feeds = ("dhl-eu", "gls", "ups-de", "parcelwise")
    lines: list[str] = []

    def emit(level: str, text: str, seconds: float) -> None:
        nonlocal clock
        clock += timedelta(seconds=seconds)
        lines.append(f"{clock:%Y-%m-%dT%H:%M:%S}.{rng.randint(0, 999):03d}Z {level:<5} ingestd.worker[{worker}] {text}")

    for number in range(first_batch, first_batch + batches):
        batch, feed = f"batch_{number:04d}", feeds[(number + rotation) % 4]
        emit("INFO", f"claimed batch={batch} feed={feed} size_bytes={rng.randint(380_000, 910_000)}",
             rng.uniform(12, 26))
        if feed == "parcelwise" and number >= 142:
            for attempt, pause in enumerate((2, 10, 30), 1):
                emit("WARN", f"batch={batch} feed={feed} attempt {attempt}/3 failed: Invalid isoformat string: "
                             f"'1796004{100123 + number * 3}'", rng.uniform(0.4, 0.9) + (pause if attempt > 1 else 0))
            emit("ERROR", f"batch={batch} feed={feed} failed after 3 retries", 0.01)
            lines.extend(_traceback(batch))
            emit("INFO", f"moved spool/incoming/{batch}.csv -> spool/failed/{batch}.csv", 0.02)
        else:
            rows = rng.randint(3200, 5000)
            emit("DEBUG", f"batch={batch} parsed rows={rows} rejected=0 elapsed_ms={rng.randint(300, 1400)}",
                 rng.uniform(0.5, 1.6))
            emit("INFO", f"batch={batch} feed={feed} rows={rows} copied={rows}", rng.uniform(0.8, 2.5))
        if rng.random() < 0.35:
            emit("DEBUG", f"heartbeat queue_depth={rng.randint(0, 40)} rss_mb={rng.randint(210, 260)}", 0.3)
    return lines


WORKER_3_LOG = _worker_log(3, 96, 64, rotation=1)
WORKER_1_LOG = _worker_log(1, 138, 12, rotation=0)
FAILED_BATCHES = sorted((142, 146, 150, 154, 158, 143, 147))


def _failed_batch_csv() -> str:
    rng = random.Random("coding-en/batch_0142")
    rows = ["shipment_id,event,event_ts,hub,weight_kg,carrier_ref"]
    for i in range(60):
        ts = (f"2026-11-29T{22 + i // 40:02d}:{i % 60:02d}:{rng.randint(0, 59):02d}+00:00" if i < 17
              else str(1796004000000 + i * 61_003 + rng.randint(0, 999)))
        rows.append(f"PW{rng.randint(10**9, 10**10 - 1)},{rng.choice(('collected', 'handover', 'pod'))},{ts},"
                    f"{rng.choice(('LEJ', 'HAM', 'CGN', 'MUC', 'FRA'))},{rng.uniform(0.2, 31.5):.2f},"
                    f"R-{rng.randint(100000, 999999)}")
    return "\n".join(rows)


PATCH_ANY_DIGITS = """--- a/ingestd/parse.py
+++ b/ingestd/parse.py
@@ -22,4 +22,6 @@ class Event:
 def parse_ts(text: str) -> datetime:
+    if text.isdigit():
+        return datetime.fromtimestamp(int(text) / 1000, tz=UTC)
     value = datetime.fromisoformat(text)
     if value.tzinfo is None:
         value = value.replace(tzinfo=UTC)
"""

PATCH_TEST = """--- a/tests/test_parse.py
+++ b/tests/test_parse.py
@@ -43,1 +43,12 @@ def test_parse_ts_keeps_offset():
     assert parse_ts("2026-11-29T23:10:00+01:00") == datetime(2026, 11, 29, 22, 10, tzinfo=UTC)
+
+
+def test_parse_ts_reads_epoch_milliseconds():
+    # Parcelwise's v2 export sends epoch milliseconds for some rows (INC-20417).
+    assert parse_ts("1796004000123") == datetime(2026, 11, 30, 2, 0, 0, 123000, tzinfo=UTC)
+
+
+@pytest.mark.parametrize("text", ["179600400012", "17960040001234", "1796004000.123"])
+def test_parse_ts_rejects_other_numbers(text):
+    with pytest.raises(ValueError):
+        parse_ts(text)
"""

PATCH_THIRTEEN_DIGITS = """--- a/ingestd/parse.py
+++ b/ingestd/parse.py
@@ -22,6 +22,8 @@ class Event:
 def parse_ts(text: str) -> datetime:
-    if text.isdigit():
-        return datetime.fromtimestamp(int(text) / 1000, tz=UTC)
+    # Parcelwise's v2 export mixes ISO 8601 and epoch milliseconds in one file; nothing else is a timestamp.
+    if len(text) == 13 and text.isdigit():
+        seconds, millis = divmod(int(text), 1000)
+        return datetime.fromtimestamp(seconds, tz=UTC).replace(microsecond=millis * 1000)
     value = datetime.fromisoformat(text)
     if value.tzinfo is None:
         value = value.replace(tzinfo=UTC)
"""

PYTEST_FAILED = """============================= test session starts ==============================
platform linux -- Python 3.11.9, pytest-8.3.3, pluggy-1.5.0
rootdir: /srv/ingestd
configfile: pyproject.toml
collected 9 items

tests/test_parse.py ......FF.                                            [100%]

=================================== FAILURES ===================================
________________ test_parse_ts_rejects_other_numbers[179600400012] ________________

text = '179600400012'

    @pytest.mark.parametrize("text", ["179600400012", "17960040001234", "1796004000.123"])
    def test_parse_ts_rejects_other_numbers(text):
>       with pytest.raises(ValueError):
E       Failed: DID NOT RAISE <class 'ValueError'>

tests/test_parse.py:52: Failed
_______________ test_parse_ts_rejects_other_numbers[17960040001234] _______________

text = '17960040001234'

    @pytest.mark.parametrize("text", ["179600400012", "17960040001234", "1796004000.123"])
    def test_parse_ts_rejects_other_numbers(text):
>       with pytest.raises(ValueError):
E       Failed: DID NOT RAISE <class 'ValueError'>

tests/test_parse.py:52: Failed
=========================== short test summary info ============================
FAILED tests/test_parse.py::test_parse_ts_rejects_other_numbers[179600400012] - Failed: DID NOT RAISE <cl...
FAILED tests/test_parse.py::test_parse_ts_rejects_other_numbers[17960040001234] - Failed: DID NOT RAIS...
========================= 2 failed, 7 passed in 0.41s =========================="""


def _pytest_suite() -> str:
    """`pytest tests -v` over the whole suite, every test passing."""
    rng = random.Random("coding-en/suite")
    modules = ("test_config", "test_db", "test_feeds", "test_parse", "test_pipeline", "test_retry", "test_spool",
               "test_cli", "integration/test_copy", "integration/test_replay")
    verbs = ("reads", "rejects", "keeps", "skips", "moves", "retries", "copies", "loads", "counts", "names")
    things = ("empty_file", "bom", "latin1_feed", "semicolon_delimiter", "missing_hub", "zero_weight", "offset",
              "naive_timestamp", "duplicate_shipment", "failed_batch", "unknown_feed", "event_kind_alias",
              "large_batch", "partial_copy", "backoff", "spool_path")
    lines: list[str] = []
    for module in modules:
        size = 9 if module == "test_parse" else rng.randint(6, 22)
        names = sorted({f"test_{rng.choice(verbs)}_{rng.choice(things)}" for _ in range(size * 3)})[:size]
        lines.extend(f"tests/{module}.py::{name} PASSED" for name in names)
    total = len(lines)
    lines = [f"{line:<74} [{100 * i // total:>3}%]" for i, line in enumerate(lines, 1)]
    head = ("============================= test session starts ==============================\n"
            "platform linux -- Python 3.11.9, pytest-8.3.3, pluggy-1.5.0 -- /srv/ingestd/.venv/bin/python\n"
            f"collected {total} items\n\n")
    rule = "=" * 29
    return head + "\n".join(lines) + f"\n\n{rule} {total} passed in 6.82s {rule}"


def coding() -> AgentTrace:
    """Why the nightly ingest fails: a long log/search/read loop, a patch that its test catches, a PR."""
    c = Conversation("coding-en", CODING_SYSTEM, named_results=True)
    c.developer("Sandbox: the checkout is on branch main at 3f9c2e1. The workspace is writable, /var/log is "
                "read-only, and there is no network, so pip install will fail.")
    log_path = "/var/log/ingestd/worker-3.log"
    c.user("Nightly ingest has been failing since yesterday's deploy. The worker log is at "
           f"{log_path}, and the feed settings live in config/pipeline.yaml in case you need them later. This is "
           "INC-20417 if you need to reference it. Keep it Python 3.11 and don't add any dependencies, we're frozen "
           "for the audit. And don't touch anything under migrations/.")
    c.act(Call("tail_log", {"path": log_path, "lines": 170}, "\n".join(WORKER_3_LOG[-170:])),
          text="I'll start with the worker log.")
    grep = "\n".join((f"ingestd/parse.py:{_line(PARSE_PY, 'def parse_ts')}:def parse_ts(text: str) -> datetime:",
                      f"ingestd/parse.py:{_line(PARSE_PY, 'fromisoformat')}:    value = datetime.fromisoformat(text)",
                      "ingestd/feeds.py:48:    updated = datetime.fromisoformat(raw.get(\"updated\", EPOCH))",
                      "ingestd/cli.py:77:        since = datetime.fromisoformat(args.since)"))
    c.act(Call("search_code", {"pattern": r"def parse_ts|fromisoformat", "glob": "ingestd/**/*.py"}, grep),
          text="Every parcelwise batch since 02:15 UTC fails three times in parse_ts with `ValueError: Invalid "
               "isoformat string: '1796004100549'`: a 13-digit number, which looks like epoch milliseconds. The "
               "other feeds are fine. Let me find where timestamps are parsed.")
    c.act(Call("read_file", {"path": "ingestd/parse.py"}, _numbered(PARSE_PY)),
          Call("read_file", {"path": "ingestd/pipeline.py", "start_line": 1, "end_line": 45},
               _numbered(PIPELINE_PY, 1, 45)),
          Call("list_dir", {"path": "tests"}, "__init__.py\nconftest.py\nfixtures/\nintegration/\ntest_cli.py\n"
                                              "test_config.py\ntest_db.py\ntest_feeds.py\ntest_parse.py\n"
                                              "test_pipeline.py\ntest_retry.py\ntest_spool.py"))
    c.act(Call("search_code", {"pattern": r"epoch|\d{13}", "glob": "tests/**"}, ""),
          text="parse_ts only knows datetime.fromisoformat. Does any test cover numeric timestamps?")
    c.act(Call("list_dir", {"path": "/srv/ingestd/spool/failed"},
               "\n".join(f"batch_{n:04d}.csv" for n in FAILED_BATCHES)))
    c.act(Call("read_file", {"path": "/srv/ingestd/spool/failed/batch_0142.csv", "end_line": 61},
               _numbered(_failed_batch_csv())),
          text="No test does. The failed batches are kept in the spool; let me look at the first one.")
    c.act(Call("tail_log", {"path": log_path, "lines": 40, "grep": "parcelwise"},
               "\n".join([line for line in WORKER_3_LOG if "parcelwise" in line][-40:])))
    c.say("Found it. Since yesterday's switch to Parcelwise's v2 export, its files mix two timestamp forms: in "
          "batch_0142 the first 17 rows carry ISO 8601 (`2026-11-29T22:00:02+00:00`) and the rest 13-digit "
          "epoch milliseconds (`1796004100549` from the log is 2026-11-30 02:01:40.549 UTC). `parse_ts` "
          f"(ingestd/parse.py, line {_line(PARSE_PY, 'def parse_ts')}) hands everything to "
          "`datetime.fromisoformat`, which raises on the numbers, so `run_batch` retries three times and moves "
          "the whole batch to spool/failed. Seven parcelwise batches are there now; the other feeds are "
          "unaffected. No test covers numeric timestamps.")
    c.user([{"type": "text", "text": "That matches the Grafana panel, failures start right at 02:15 UTC. Could we "
                                     "handle it per feed in the config instead of in code?"},
            {"type": "image_url", "image_url": {"url": "https://example.com/grafana-ingest-failures.png"}}])
    c.act(Call("read_file", {"path": "config/pipeline.yaml"}, _numbered(PIPELINE_YAML)),
          text="The panel agrees with the log: the first failure is batch_0142 at 02:15. Let me look at the feed "
               "config.")
    c.say("The config has a `timestamp_format: iso8601` default, but nothing reads it: `parse_row` passes only the "
          "string to `parse_ts`. A per-feed setting would not save batch_0142 either, because one file holds both "
          "forms. I'd make `parse_ts` accept exactly two forms, an ISO 8601 string or 13 digits read as UTC epoch "
          "milliseconds, and reject everything else. Standard library only, nothing under migrations/. OK?")
    c.user("Go with that. Keep it strict, only ISO or exactly 13 digits. Add a test.")
    c.act(Call("apply_patch", {"patch": PATCH_ANY_DIGITS}, "Applied 1 hunk to ingestd/parse.py."),
          text="Patching parse_ts first, then the tests.")
    c.act(Call("apply_patch", {"patch": PATCH_TEST}, "Applied 1 hunk to tests/test_parse.py."))
    c.act(Call("run_tests", {"target": "tests/test_parse.py"}, PYTEST_FAILED))
    c.act(Call("apply_patch", {"patch": PATCH_THIRTEEN_DIGITS}, "Applied 1 hunk to ingestd/parse.py."),
          text="My own test caught it: the first patch took any digit string, and you asked for exactly 13 digits. "
               "Fixing that, and reading the milliseconds without going through a float.")
    c.act(Call("run_tests", {"target": "tests/test_parse.py"},
               "tests/test_parse.py .........                                            [100%]\n\n"
               "9 passed in 0.38s"))
    c.act(Call("run_tests", {"target": "tests", "extra_args": "-v"}, _pytest_suite()))
    c.act(Call("run_tests", {"target": "tests/integration/test_replay.py",
                             "extra_args": "--batch /srv/ingestd/spool/failed/batch_0142.csv"},
               "tests/integration/test_replay.py .                                      [100%]\n"
               "replayed batch_0142: rows=4871 copied=4871 rejected=0\n\n1 passed in 2.09s"))
    c.say("Fixed and tested. `parse_ts` now reads a 13-digit string as UTC epoch milliseconds and passes "
          "everything else to `fromisoformat`, as before. The new tests cover the epoch form and reject 12 and "
          "14 digits and a decimal point; the whole suite passes, and replaying batch_0142 copies all 4,871 rows. "
          "Two files changed: ingestd/parse.py and tests/test_parse.py.")
    c.user("Nice. Open a PR and reference the incident. Explain in the body why we parse both forms instead of "
           "using the per-feed config.")
    body = ("Fixes INC-20417.\n\nParcelwise's v2 export (live since 2026-11-29) sends `event_ts` as ISO 8601 in "
            "some rows and as 13-digit epoch milliseconds in others, within one file. `parse_ts` now accepts "
            "exactly those two forms.\n\nWhy not `timestamp_format` per feed: nothing reads that setting today, "
            "and a per-feed format cannot parse a file that mixes both forms.\n\n- tests: epoch milliseconds "
            "parsed; 12/14 digits and decimals rejected\n- replayed spool/failed/batch_0142.csv: 4871/4871 rows")
    c.act(Call("open_pull_request", {"title": "Accept epoch-millisecond event_ts from Parcelwise (INC-20417)",
                                     "body": body, "branch": "fix/inc-20417-epoch-ms"},
               {"number": 882, "url": "https://git.example.com/logistics/ingestd/pull/882", "branch":
                "fix/inc-20417-epoch-ms", "checks": {"lint": "queued", "tests": "queued"}}))
    c.say("Opened https://git.example.com/logistics/ingestd/pull/882 (branch fix/inc-20417-epoch-ms); CI is "
          "queued. Once it is merged and deployed, the seven batches in spool/failed can be replayed.")
    c.user("Can you check whether workers 1 and 2 hit the same thing?")
    c.act(Call("tail_log", {"path": "/var/log/ingestd/worker-1.log", "lines": 50, "grep": "Invalid isoformat"},
               "\n".join(line for line in WORKER_1_LOG if "Invalid isoformat" in line)),
          Call("tail_log", {"path": "/var/log/ingestd/worker-2.log", "lines": 50, "grep": "Invalid isoformat"}, ""))
    c.say("Worker 1 did: it failed the same way on batches 0143 and 0147 (three attempts each), and those two "
          "are among the seven in spool/failed. Worker 2 has no such line; it only runs the dhl-eu group.")
    c.user("Thanks. Last thing: do we need a migration for this?")
    c.say("No. `event_ts` is already a timestamptz column and the fix is only in parsing, so nothing under "
          "migrations/ changes, and no dependency was added.")
    return c.trace("en", CODING_TOOLS, given_ids=(log_path, "config/pipeline.yaml", "INC-20417"),
                   constraints=("Keep it Python 3.11", "don't add any dependencies",
                                "don't touch anything under migrations/", "only ISO or exactly 13 digits"))


# ---------------------------------------------------------------------------------------------------------------
# helpdesk-en: an IT service desk (MFA reset, a VPN that drops, a license that needs approval)

HELPDESK_SYSTEM = """You are the IT service desk assistant for Contoso Finance employees.

- Identify the employee by work e-mail before anything else.
- Troubleshoot with the tools first. Open a ticket for whatever you cannot fix in the chat, always with a callback \
number.
- Never reset a password or MFA unless the employee asks for it.
- Software licenses need the employee's manager as approver on a ticket before they are assigned.
- Knowledge-base articles are internal: summarise them, don't paste them.
- Keep answers short; employees are usually in the middle of something."""

HELPDESK_TOOLS = (
    function("lookup_employee", "An employee's directory entry, devices, MFA methods and manager.",
             {"email": prop("string", "work e-mail address")}, ("email",)),
    function("reset_mfa", "Remove an MFA registration so the employee can enroll a new device.",
             {"employee_id": prop("string", "such as 'E100391'"),
              "method": prop("string", "which registration", enum=["authenticator_app", "sms", "hardware_key"])},
             ("employee_id", "method")),
    function("get_device", "A managed device: hardware, OS, drivers, VPN client, compliance.",
             {"asset_tag": prop("string", "such as 'LT-0012345'")}, ("asset_tag",)),
    function("get_vpn_sessions", "VPN sessions of a user, newest first, with network and disconnect reason.",
             {"username": prop("string", "directory username"), "days": prop("integer", "how far back")},
             ("username", "days")),
    function("list_tickets", "An employee's tickets.", {"employee_id": prop("string", "employee id"),
                                                        "status": prop("string", "filter",
                                                                       enum=["open", "resolved", "all"])},
             ("employee_id",)),
    function("get_device_logs", "The last lines of a log collected from a managed device.",
             {"asset_tag": prop("string", "device"),
              "source": prop("string", "which log", enum=["globalprotect", "wlan", "system", "intune"]),
              "lines": prop("integer", "how many (max 300)")}, ("asset_tag", "source", "lines")),
    function("search_kb", "Internal knowledge-base articles, best match first.",
             {"query": prop("string", "what to look for"), "limit": prop("integer", "at most this many")},
             ("query",)),
    function("push_software", "Queue a software package for install on a managed device.",
             {"asset_tag": prop("string", "device"), "package": prop("string", "package id from Software Center")},
             ("asset_tag", "package")),
    function("get_license_usage", "Seat usage of a licensed product as CSV.",
             {"product": prop("string", "product name")}, ("product",)),
    function("create_ticket", "Open a ticket (or record one already resolved).",
             {"employee_id": prop("string", "who it is for"),
              "category": prop("string", "area", enum=["access", "hardware", "network", "software", "license"]),
              "summary": prop("string", "one line"), "contact_phone": prop("string", "callback number"),
              "priority": prop("string", "urgency", enum=["low", "normal", "high"]),
              "approver_id": prop("string", "employee id of the approver, for licenses"),
              "status": prop("string", "initial state", enum=["new", "resolved"])},
             ("employee_id", "category", "summary", "contact_phone")),
    function("assign_license", "Assign a product license under an approved ticket.",
             {"employee_id": prop("string", "who gets it"), "product": prop("string", "product name"),
              "ticket_id": prop("string", "the approved ticket")}, ("employee_id", "product", "ticket_id")),
    function("add_ticket_note", "Add a work note to a ticket.",
             {"ticket_id": prop("string", "ticket"), "note": prop("string", "the note")}, ("ticket_id", "note")),
)

PRIYA = {
    "employee_id": "E104772", "name": "Priya Raman", "email": "priya.raman@contoso-fin.com", "username": "praman",
    "department": "Treasury", "title": "Senior Treasury Analyst",
    "location": {"site": "NYC-7WTC", "floor": 31, "desk": "31-118"},
    "manager": {"employee_id": "E100391", "name": "Daniel Okoye", "email": "daniel.okoye@contoso-fin.com"},
    "devices": [{"asset_tag": "LT-0093317", "type": "laptop", "model": "ThinkPad T14s Gen 4", "status": "active"},
                {"asset_tag": "MB-0020418", "type": "phone", "model": "iPhone 13", "status": "active"}],
    "groups": ["treasury-analysts", "vpn-users", "sap-fi-readonly", "powerbi-viewers"],
    "mfa": {"default": "authenticator_app",
            "methods": [{"type": "authenticator_app", "device": "iPhone 13", "registered": "2024-02-11"},
                        {"type": "sms", "phone": "+1 *** *** 0142", "registered": "2022-08-30"}]},
    "password_last_changed": "2026-12-02T13:05:00Z", "account_status": "active",
}


def _laptop(driver: str, installed: str) -> Record:
    return {"asset_tag": "LT-0093317", "model": "ThinkPad T14s Gen 4", "serial": "PF4XK2LM",
            "os": {"name": "Windows 11 Enterprise", "version": "23H2", "build": "22631.4460"},
            "drivers": {"wifi": {"adapter": "Intel(R) Wi-Fi 6E AX211 160MHz", "version": driver,
                                 "installed": installed},
                        "graphics": {"adapter": "Intel(R) Iris(R) Xe", "version": "31.0.101.5333"}},
            "vpn_client": {"name": "GlobalProtect", "version": "6.1.1-27", "portal": "vpn.contoso-fin.example"},
            "compliance": {"state": "compliant", "bitlocker": True, "defender": "up_to_date",
                           "last_check_in": "2026-12-02T14:58:12Z"},
            "primary_user": "praman", "enrolled": "2025-01-20"}


def _vpn_sessions(days: int, newest: int = 40) -> Record:
    """The newest sessions and a daily summary: since Monday's driver they end after 9-15 minutes (DPD timeout)."""
    rng = random.Random("helpdesk-en/vpn")  # one stream: a shorter look-back sees the same newest days
    sessions, daily = [], []
    for back in range(days):
        day = datetime(2026, 12, 2) - timedelta(days=back)
        if day.weekday() >= 5:
            continue
        broken = day >= datetime(2026, 11, 30)
        clock, until, today = day.replace(hour=8, minute=rng.randint(20, 50)), day.replace(hour=18), []
        if back == 0:
            until = day.replace(hour=14, minute=50)
        while clock < until:
            minutes = min(rng.randint(9, 15) if broken else rng.randint(95, 260), (until - clock).seconds // 60)
            end = clock + timedelta(minutes=minutes)
            today.append({
                "session_id": f"gp-{rng.getrandbits(40):010x}", "start": f"{clock:%Y-%m-%dT%H:%M:%SZ}",
                "end": f"{end:%Y-%m-%dT%H:%M:%SZ}", "duration_min": minutes,
                "gateway": rng.choice(("gw-nyc-01", "gw-nyc-02")),
                "network": {"type": "wifi", "ssid": "CFIN-Corp", "rssi_dbm": rng.randint(-67, -48)},
                "disconnect_reason": "DPD timeout" if broken else rng.choice(("user logout", "sleep")),
            })
            clock = end + timedelta(minutes=rng.choice((1, 1, 2, 3, 45)) if broken else rng.randint(20, 70))
        durations = sorted(s["duration_min"] for s in today)
        daily.append({"date": f"{day:%Y-%m-%d}", "sessions": len(today), "median_min": durations[len(today) // 2],
                      "dpd_timeouts": sum(s["disconnect_reason"] == "DPD timeout" for s in today)})
        sessions.extend(reversed(today))
    return {"username": "praman", "days": days, "total": len(sessions), "daily": daily, "sessions": sessions[:newest]}


def _vpn_sessions_after_fix() -> Record:
    today = _vpn_sessions(1, newest=6)
    current = {"session_id": "gp-3c9e11d07a", "start": "2026-12-02T15:21:40Z", "end": None, "duration_min": 21,
               "gateway": "gw-nyc-02", "network": {"type": "wifi", "ssid": "CFIN-Corp", "rssi_dbm": -55},
               "disconnect_reason": None}
    return {**today, "total": today["total"] + 1, "sessions": [current, *today["sessions"]]}


def _globalprotect_log() -> str:
    rng = random.Random("helpdesk-en/gp-log")
    clock, lines = datetime(2026, 12, 2, 13, 31, 4), []
    while len(lines) < 120:
        for _ in range(rng.randint(8, 12)):
            clock += timedelta(seconds=rng.randint(50, 70))
            lines.append(f"{clock:%Y-%m-%d %H:%M:%S}.{rng.randint(0, 999):03d} [Debug] (PanGPS) keep-alive "
                         f"sent to gw-nyc-02, rtt={rng.randint(11, 29)}ms")
        for probe in (1, 2, 3):
            clock += timedelta(seconds=10)
            lines.append(f"{clock:%Y-%m-%d %H:%M:%S}.{rng.randint(0, 999):03d} [Warn ] (PanGPS) DPD probe "
                         f"{probe}/3 to gw-nyc-02 unanswered")
        lines.append(f"{clock:%Y-%m-%d %H:%M:%S}.{rng.randint(0, 999):03d} [Error] (PanGPS) gateway gw-nyc-02 "
                     "not responding (DPD timeout), tearing down tunnel")
        clock += timedelta(seconds=rng.randint(20, 60))
        lines.append(f"{clock:%Y-%m-%d %H:%M:%S}.{rng.randint(0, 999):03d} [Info ] (PanGPA) reconnecting: "
                     "portal vpn.contoso-fin.example, user praman")
        lines.append(f"{clock:%Y-%m-%d %H:%M:%S}.{rng.randint(0, 999):03d} [Info ] (PanGPS) tunnel up, "
                     f"gateway gw-nyc-0{rng.randint(1, 2)}, ip 10.88.{rng.randint(0, 255)}.{rng.randint(2, 254)}")
    return "\n".join(lines[-120:])


def _wlan_log() -> str:
    rng = random.Random("helpdesk-en/wlan-log")
    clock, lines = datetime(2026, 12, 2, 14, 2, 0), []
    events = ("Netwtw14: connection quality ok, rssi {rssi} dBm",
              "WLAN-AutoConfig: adapter power state D0 -> D2 (idle), driver 23.20.0.4",
              "WLAN-AutoConfig: adapter power state D2 -> D0, resume {ms} ms",
              "Netwtw14: beacon loss on CFIN-Corp, rssi {rssi} dBm, reassociating",
              "WLAN-AutoConfig: connected to CFIN-Corp (802.11ax, 5 GHz, channel 149)")
    for _ in range(80):
        clock += timedelta(seconds=rng.randint(5, 40))
        text = rng.choices(events, weights=(5, 3, 3, 1, 1))[0].format(rssi=rng.randint(-66, -49),
                                                                       ms=rng.randint(900, 4200))
        lines.append(f"{clock:%Y-%m-%d %H:%M:%S} {text}")
    return "\n".join(lines)


KB_ARTICLES = (
    ("KB0012873", "GlobalProtect drops every 10-15 minutes after Intel Wi-Fi driver 23.20 (Nov 2026)", 0.93),
    ("KB0011402", "GlobalProtect: 'Gateway not responding' and DPD timeouts explained", 0.81),
    ("KB0009950", "Disable Wi-Fi adapter power saving on managed laptops", 0.74),
    ("KB0012051", "Intel Wi-Fi 6E AX211: known issues by driver version", 0.72),
    ("KB0008132", "VPN disconnects when the laptop lid closes", 0.55),
    ("KB0010764", "GlobalProtect 6.1 upgrade notes", 0.49),
    ("KB0007718", "Wi-Fi CFIN-Corp vs CFIN-Guest: which to use", 0.41),
    ("KB0011999", "Collecting GlobalProtect logs for the network team", 0.38),
    ("KB0006203", "Split tunnelling for Teams and Zoom", 0.31),
    ("KB0010311", "VPN: 'portal not reachable' at home", 0.29),
    ("KB0005540", "Reset network settings on Windows 11", 0.24),
    ("KB0004410", "Requesting a loaner laptop", 0.11),
)


def _kb_results() -> list[Record]:
    rng = random.Random("helpdesk-en/kb")
    return [{"id": kb_id, "title": title, "score": score, "updated": f"2026-{rng.randint(1, 11):02d}-"
             f"{rng.randint(1, 28):02d}", "audience": "it-staff" if score > 0.7 else "employees",
             "tags": sorted(rng.sample(("vpn", "wifi", "driver", "globalprotect", "windows", "intel", "network",
                                        "laptop"), 3)),
             "summary": title if score < 0.9 else "Intel driver 23.20.0.4 (pushed to the broad ring on 2026-11-30) "
             "puts the AX211 adapter into D2 idle too aggressively; GlobalProtect misses its DPD replies and drops "
             "the tunnel. Fixed in 23.60.1 (Software Center package intel-wifi-driver-23.60.1); reboot needed."}
            for kb_id, title, score in KB_ARTICLES]


def _license_csv() -> str:
    rng = random.Random("helpdesk-en/licenses")
    first = ("Ana", "Ben", "Chloe", "Dev", "Elif", "Farid", "Grace", "Hiro", "Ines", "Jon", "Kemi", "Luca", "Mei",
             "Nadia", "Omar", "Pia", "Raj", "Sofia", "Theo", "Uma", "Viktor", "Wen", "Yara", "Zane")
    last = ("Adams", "Baptiste", "Chen", "Dubois", "Eze", "Fischer", "Gupta", "Haddad", "Ito", "Jensen", "Kowalski",
            "Lopez", "Moreau", "Nakamura", "Olsen", "Patel", "Quinn", "Rossi", "Silva", "Tanaka")
    departments = ("Treasury", "FP&A", "Risk", "Controlling", "Tax", "Audit", "Investor Relations")
    rows = ["employee_id,name,department,assigned_on,last_used_on"]
    for _ in range(40):
        rows.append(f"E{rng.randint(100000, 109999)},{rng.choice(first)} {rng.choice(last)},"
                    f"{rng.choice(departments)},2026-{rng.randint(1, 10):02d}-{rng.randint(1, 28):02d},"
                    f"2026-{rng.randint(11, 12):02d}-{rng.randint(1, 2):02d}")
    return "\n".join(rows) + "\n# rows 1-40 of 247; seats_total=250 seats_assigned=247 seats_free=3"


def helpdesk() -> AgentTrace:
    """An employee with a new phone and a VPN that drops: MFA reset, device logs, a driver, a license ticket."""
    c = Conversation("helpdesk-en", HELPDESK_SYSTEM, named_results=True)
    c.user("hi, Priya Raman from Treasury here (priya.raman@contoso-fin.com). Two things: my VPN keeps dropping "
           "every 10-15 minutes since Monday, and I got a new phone so my authenticator app is gone. Laptop is "
           "LT-0093317 if that helps.")
    c.act(Call("lookup_employee", {"email": "priya.raman@contoso-fin.com"}, PRIYA),
          text="Hi Priya, let me look you up.")
    c.say("Found you. Your authenticator is still registered to the old iPhone 13. Do you want me to reset that "
          "registration so you can enroll the new phone? It doesn't touch your password. Then we'll do the VPN.")
    c.user("Yes, reset MFA to the new phone, but please don't reset my password, I literally just changed it this "
           "morning. Also I'm out Friday, so if anything needs a callback do it before then, and call my mobile "
           "+1 415 555 0142. No Teams calls, my laptop camera is busted.")
    c.act(Call("reset_mfa", {"employee_id": "E104772", "method": "authenticator_app"},
               {"employee_id": "E104772", "method": "authenticator_app", "status": "reset",
                "removed_registrations": ["iPhone 13"],
                "enrollment": {"url": "https://aka.contoso-fin.example/mfa-setup", "code_expires_in_min": 30}}),
          text="Resetting only the authenticator registration; your password stays as it is.")
    c.say("Done. On the new phone, open Microsoft Authenticator, then on your laptop go to "
          "https://aka.contoso-fin.example/mfa-setup and scan the QR code within 30 minutes. Tell me when it works.")
    c.user("done, new phone works. ok, the VPN")
    c.act(Call("get_device", {"asset_tag": "LT-0093317"},
               as_json(_laptop("23.20.0.4", "2026-11-30T07:12:04Z"), indent=2)),  # this tool pretty-prints
          Call("get_vpn_sessions", {"username": "praman", "days": 7}, _vpn_sessions(7)),
          Call("list_tickets", {"employee_id": "E104772", "status": "open"}, "[]"))
    c.act(Call("get_device_logs", {"asset_tag": "LT-0093317", "source": "globalprotect", "lines": 120},
               _globalprotect_log()),
          text="Before Monday your sessions lasted hours; since Monday morning every one ends after 9-15 minutes "
               "with 'DPD timeout', always on CFIN-Corp Wi-Fi. The laptop also got a new Wi-Fi driver, 23.20.0.4, "
               "on Monday at 07:12. Checking the VPN client log.")
    c.act(Call("search_kb", {"query": "GlobalProtect DPD timeout Intel Wi-Fi driver 23.20", "limit": 12},
               _kb_results()))
    c.act(Call("get_device_logs", {"asset_tag": "LT-0093317", "source": "wlan", "lines": 80}, _wlan_log()),
          text="The first KB hit matches your symptoms exactly. Checking the Wi-Fi log.")
    c.act(Call("get_device_logs", {"asset_tag": "LT-0093317", "source": "intune", "lines": 6}, "\n".join((
        "2026-11-30 07:02:41 Policy sync: 14 policies, 3 apps, 1 driver update",
        "2026-11-30 07:03:10 Driver update 'Intel Wi-Fi 6E AX211 23.20.0.4' (ring: broad, approved 2026-11-27) queued",
        "2026-11-30 07:11:58 Installing driver package intel-wifi-driver-23.20.0.4",
        "2026-11-30 07:12:04 Driver installed, no reboot required",
        "2026-12-01 07:05:33 Policy sync: no changes",
        "2026-12-02 07:04:51 Policy sync: driver update 'intel-wifi-driver-23.60.1' available (ring: pilot)"))),
          text="The adapter drops to idle every minute or so. Checking how that driver got onto the laptop.")
    c.say("Found the cause. Monday's Intel Wi-Fi driver (23.20.0.4) puts the adapter to sleep too eagerly; the "
          "Wi-Fi log shows it idling every minute or so, and the VPN client misses three keep-alive replies in a "
          "row and drops the tunnel. It's a known issue (KB0012873), fixed in driver 23.60.1. I can push that to "
          "your laptop now; it needs a reboot.")
    c.user([{"type": "text", "text": "ok. this is what pops up each time btw"},
            {"type": "image_url", "image_url": {"url": "https://example.com/vpn-disconnect.png"}}])
    c.say("That 'Gateway gw-nyc-02 not responding' dialog is GlobalProtect giving up after the missed keep-alives, "
          "the same DPD timeouts as in the log. The driver update should make it go away.")
    c.user("ok push it. also, while I have you: I need Power BI Pro for the Q4 close, Daniel (my manager) already "
           "said yes.")
    c.act(Call("push_software", {"asset_tag": "LT-0093317", "package": "intel-wifi-driver-23.60.1"},
               {"job_id": "SC-2291873", "status": "queued", "reboot_required": True, "eta_min": 5}),
          Call("get_license_usage", {"product": "Power BI Pro"}, _license_csv()))
    c.act(Call("create_ticket", {"employee_id": "E104772", "category": "license", "summary": "Power BI Pro for Q4 "
                                 "close", "contact_phone": "+1 415 555 0142", "priority": "normal",
                                 "approver_id": "E100391"},
               {"ticket_id": "RITM0048213", "status": "awaiting_approval",
                "approver": {"employee_id": "E100391", "name": "Daniel Okoye", "notified": "email"}}),
          text="The driver is queued. Power BI Pro has 3 of 250 seats free, and a license needs Daniel's approval on "
               "a ticket, so I'm opening one with him as approver.")
    c.act(Call("assign_license", {"employee_id": "E104772", "product": "Power BI Pro", "ticket_id": "RITM0048213"},
               "Assignment blocked: RITM0048213 is awaiting approval from E100391 (Daniel Okoye)."))
    c.act(Call("add_ticket_note", {"ticket_id": "RITM0048213", "note": "Employee says the manager approved "
                                   "verbally. Callback on mobile only (+1 415 555 0142), no Teams. Out of office "
                                   "Friday 2026-12-04."}, ""))
    c.say("Two updates:\n- Wi-Fi driver: queued; it installs within about 5 minutes and then needs a reboot.\n"
          "- Power BI Pro: ticket RITM0048213 is waiting for Daniel's approval (he's been e-mailed). Once he "
          "approves, the license is assigned automatically. I noted that you're out Friday and to call your mobile, "
          "not Teams.")
    c.user("rebooting now, brb")
    c.user("back. VPN's been up 20 min and counting")
    c.act(Call("get_vpn_sessions", {"username": "praman", "days": 1},
               _vpn_sessions_after_fix()),
          Call("get_device", {"asset_tag": "LT-0093317"}, _laptop("23.60.1.2", "2026-12-02T15:14:37Z")))
    c.say("Confirmed: driver 23.60.1 is installed, and your current session has been up 21 minutes with no drops, "
          "on the same Wi-Fi that dropped every 12 minutes this morning.")
    c.user("great. can you log the VPN thing somewhere in case it comes back?")
    c.act(Call("create_ticket", {"employee_id": "E104772", "category": "network", "summary": "VPN drops every "
                                 "10-15 min (DPD timeout) after Intel Wi-Fi driver 23.20; fixed with 23.60.1",
                                 "contact_phone": "+1 415 555 0142", "priority": "low", "status": "resolved"},
               {"ticket_id": "INC0091377", "status": "resolved"}))
    c.say("Logged as INC0091377 (resolved). If the drops come back, reply to that ticket and we'll call your "
          "mobile. Enjoy your Friday off!")
    c.user("thanks!")
    c.say("You're welcome, Priya.")
    return c.trace("en", HELPDESK_TOOLS, given_ids=("priya.raman@contoso-fin.com", "LT-0093317", "+1 415 555 0142"),
                   constraints=("don't reset my password", "I'm out Friday", "call my mobile", "No Teams calls"))


# ---------------------------------------------------------------------------------------------------------------
# orders-en: an electronics shop's order support (a defective item exchanged, a lost parcel refunded)

ORDERS_SYSTEM = """You are Voltbay's customer support assistant. Voltbay sells consumer electronics online in the EU.

Policies:
- Verify the customer by the account e-mail before discussing orders.
- Returns within 30 days of delivery. Defective items: free return, exchange or refund, no restocking fee. Opened \
items that work: 15% restocking fee.
- Refunds go to the original payment method unless the customer asks for store credit. Store credit is issued at \
once; card and PayPal refunds take 3-5 business days.
- Exchanges only for items in stock; price differences are charged or refunded.
- A parcel without a tracking update for 5 days can be traced with the carrier. If the carrier declares it lost, \
refund it or send a new one, as the customer prefers.
- Confirm with the customer before anything that moves money."""

ORDERS_TOOLS = (
    function("find_customer", "A customer account by e-mail: contact, addresses, payment methods.",
             {"email": prop("string", "account e-mail")}, ("email",)),
    function("list_orders", "A customer's orders placed since a date, newest first.",
             {"customer_id": prop("string", "customer id"), "since": prop("string", "YYYY-MM-DD")},
             ("customer_id", "since")),
    function("get_order", "One order with its lines, payment and shipment.",
             {"order_id": prop("string", "such as 'ZX-12345-Q'")}, ("order_id",)),
    function("track_shipment", "Carrier scan events of a parcel, newest first.",
             {"tracking_number": prop("string", "carrier tracking number")}, ("tracking_number",)),
    function("search_products", "The catalogue: products matching a query, with variants and stock.",
             {"query": prop("string", "words to match"), "max_price": prop("number", "EUR"),
              "in_stock_only": prop("boolean", "leave out what cannot ship now")}, ("query",)),
    function("create_exchange", "Exchange an order line for another SKU; ships the replacement in advance.",
             {"order_id": prop("string", "order"), "line_id": prop("string", "order line"),
              "new_sku": prop("string", "SKU to send"), "reason": prop("string", "why"),
              "serial_number": prop("string", "serial of the returned unit")},
             ("order_id", "line_id", "new_sku", "reason")),
    function("open_carrier_trace", "Ask the carrier to trace a parcel.",
             {"tracking_number": prop("string", "parcel"), "reason": prop("string", "why")},
             ("tracking_number", "reason")),
    function("create_refund", "Refund order lines.",
             {"order_id": prop("string", "order"), "line_ids": prop("array", "lines", items={"type": "string"}),
              "method": prop("string", "where the money goes", enum=["original_payment", "store_credit"]),
              "reason": prop("string", "why")}, ("order_id", "line_ids", "method", "reason")),
    function("add_order_note", "Add an internal note to an order.",
             {"order_id": prop("string", "order"), "note": prop("string", "the note")}, ("order_id", "note")),
    function("get_store_credit", "A customer's store-credit balance and its movements.",
             {"customer_id": prop("string", "customer id")}, ("customer_id",)),
    function("send_email", "Send the customer an e-mail from support.",
             {"to": prop("string", "address"), "subject": prop("string", "subject"),
              "body": prop("string", "plain text")}, ("to", "subject", "body")),
)

TOM = {
    "customer_id": "C-5540912", "name": "Tom Becker", "email": "tom.becker84@gmx.de", "phone": "+49 170 5550 1184",
    "tier": "plus", "member_since": "2019-06-02",
    "addresses": {"home": {"street": "Weichselstraße 52", "zip": "12045", "city": "Berlin", "country": "DE"},
                  "work": {"street": "Schlesische Str. 27", "zip": "10997", "city": "Berlin", "country": "DE",
                           "company": "Kreuzlicht GmbH"}},
    "payment_methods": {
        "credit_card_7447": {"source": "credit_card", "brand": "visa", "last_four": "7447", "expires": "2027-05",
                             "status": "active"},
        "paypal_3310": {"source": "paypal", "account": "t.becker@posteo.de"},
        "store_credit": {"source": "store_credit", "balance": 12.5, "currency": "EUR"},
    },
    "contact_preferences": {"email": True, "sms": False, "phone": True},
}

PRODUCT_NAMES = {
    "headphones": ("Auralis Q35", "Auralis Q20", "Sonique Air Max", "Novabeat Studio 2", "Halden Over-Ear ANC",
                   "Arcwave Pro", "Sonique Lite", "Novabeat Go"),
    "dock": ("Kestrel 12-in-1 USB-C Dock", "Kestrel 8-in-1 Hub", "Lumen Thunderbolt 4 Dock", "Arcwave Travel Hub",
             "Halden Dual-HDMI Dock"),
    "charger": ("Lumen 65W GaN Charger", "Kestrel 100W 3-Port", "Arcwave MagCharge"),
}


def _products(seed: str, category: str, count: int, fixed: dict[int, Record], max_price: float,
              in_stock_only: bool = False) -> list[Record]:
    """A catalogue search's answer: `fixed` replaces fields of the items at those places."""
    rng = random.Random(seed)
    colors = ("Midnight Black", "Sand", "Graphite", "Ice Blue", "Forest")
    out = []
    for i in range(count):
        name = rng.choice(PRODUCT_NAMES[category])
        sku = f"{name[:3].upper()}-{rng.randint(100, 999)}"
        variants = [{"sku": f"{sku}-{color[:3].upper()}", "color": color, "stock": rng.choice((0, 0, 3, 9, 27))}
                    for color in rng.sample(colors, rng.randint(1, 3))]
        out.append({"sku": sku, "name": name, "category": category, "brand": name.split()[0],
                    "price": {"amount": round(rng.uniform(39, max_price), 2), "currency": "EUR"},
                    "rating": {"average": round(rng.uniform(3.4, 4.8), 1), "count": rng.randint(12, 4800)},
                    "variants": variants, "in_stock": any(v["stock"] for v in variants),
                    "ships_in_days": rng.choice((1, 1, 2, 3))})
        out[-1].update(fixed.get(i, {}))
    return [p for p in out if p["in_stock"] or not in_stock_only]


def _order_history() -> list[Record]:
    rng = random.Random("orders-en/history")
    items = ("HDMI 2.1 cable 2 m", "USB-C cable 1 m", "Wireless mouse", "Laptop sleeve 14\"", "Screen cleaner",
             "microSD 256 GB", "Smart plug 2-pack", "Webcam 1080p", "Power bank 20000 mAh", "Keyboard tray")
    orders = []
    for day in sorted(rng.sample(range(1, 80), 10), reverse=True):
        placed = datetime(2026, 11, 30) - timedelta(days=day)
        lines = [{"line_id": f"L{n}", "name": rng.choice(items), "qty": rng.randint(1, 2),
                  "price": round(rng.uniform(6, 60), 2)} for n in range(1, rng.randint(2, 4))]
        orders.append({"order_id": f"ZX-{rng.randint(40000, 48000)}-Q", "placed": f"{placed:%Y-%m-%d}",
                       "status": "delivered", "total": {"amount": round(sum(x["price"] * x["qty"] for x in lines), 2),
                                                        "currency": "EUR"}, "lines": lines})
    return orders


HEADPHONES_ORDER = {
    "order_id": "ZX-48213-Q", "customer_id": "C-5540912", "placed": "2026-11-20", "status": "delivered",
    "lines": [{"line_id": "L1", "sku": "AUR-Q35-MID", "name": "Auralis Q35 Wireless ANC Headphones",
               "color": "Midnight Black", "qty": 1, "price": 229.0, "returnable_until": "2026-12-24"}],
    "payment": {"payment_id": "credit_card_7447", "amount": 229.0, "currency": "EUR"},
    "shipment": {"carrier": "DHL", "tracking_number": "JJD0004471201188", "shipped": "2026-11-21",
                 "delivered": "2026-11-24", "address": "home"},
}
DOCK_ORDER = {
    "order_id": "ZX-48877-Q", "customer_id": "C-5540912", "placed": "2026-11-24", "status": "shipped",
    "lines": [{"line_id": "L1", "sku": "KES-12IN1-GRA", "name": "Kestrel 12-in-1 USB-C Dock", "color": "Graphite",
               "qty": 1, "price": 139.0}],
    "payment": {"payment_id": "paypal_3310", "amount": 139.0, "currency": "EUR"},
    "shipment": {"carrier": "DHL", "tracking_number": "JJD0004471236671", "shipped": "2026-11-25",
                 "delivered": None, "address": "work"},
}


def orders() -> AgentTrace:
    """Defective headphones exchanged and a lost dock refunded as store credit, after a six-call loop."""
    c = Conversation("orders-en", ORDERS_SYSTEM, named_results=False)
    c.user("Hi, my headphones arrived with a rattle in the left earcup. My order number is ZX-48213-Q if you need "
           "it later. Also, a USB-C dock I ordered last week still hasn't moved in tracking.")
    c.say("Sorry about both! Could you tell me the e-mail on your Voltbay account so I can verify you?")
    c.user("sure, tom.becker84@gmx.de. And please keep it to email, no phone calls, I'm at work all day.")
    c.act(Call("find_customer", {"email": "tom.becker84@gmx.de"}, TOM), text="Thanks, Tom.")
    c.act(Call("list_orders", {"customer_id": "C-5540912", "since": "2026-09-01"},
               [{k: DOCK_ORDER[k] for k in ("order_id", "placed", "status")} | {"total": {"amount": 139.0,
                                                                                          "currency": "EUR"}},
                {k: HEADPHONES_ORDER[k] for k in ("order_id", "placed", "status")} | {"total": {"amount": 229.0,
                                                                                                "currency": "EUR"}},
                *_order_history()]))
    c.act(Call("get_order", {"order_id": "ZX-48213-Q"}, HEADPHONES_ORDER),
          Call("get_order", {"order_id": "ZX-48877-Q"}, DOCK_ORDER), answers_reversed=True)
    c.act(Call("track_shipment", {"tracking_number": "JJD0004471236671"}, [
        {"time": "2026-11-27T04:12:00+01:00", "location": "Leipzig hub", "event": "arrived at sorting centre"},
        {"time": "2026-11-26T21:40:00+01:00", "location": "Hamburg", "event": "departed"},
        {"time": "2026-11-25T17:05:00+01:00", "location": "Hamburg", "event": "picked up from sender"},
        {"time": "2026-11-25T09:30:00+01:00", "location": None, "event": "label created"}]))
    c.say("Here's where things stand:\n\n"
          "- **Headphones** (ZX-48213-Q): Auralis Q35, Midnight Black, €229, delivered Tuesday, Nov 24, so you're "
          "well within 30 days, and a defect means no restocking fee.\n"
          "- **Dock** (ZX-48877-Q): Kestrel 12-in-1, shipped Nov 25 with DHL. The last scan is 'arrived at "
          "sorting centre' in Leipzig on Nov 27, nothing for 5 days, so I can open a carrier trace.\n\n"
          "First the headphones: would you like an exchange or a refund?")
    c.user([{"type": "text", "text": "Exchange for the same model if you have it, otherwise something similar under "
                                     "€250. Here's the receipt from the box, the serial is on it."},
            {"type": "image_url", "image_url": {"url": "https://example.com/receipt.png"}}])
    c.act(Call("search_products", {"query": "Auralis Q35 wireless headphones", "max_price": 250},
               _products("orders-en/headphones", "headphones", 24, {0: {
                   "sku": "AUR-Q35", "name": "Auralis Q35 Wireless ANC Headphones", "brand": "Auralis",
                   "price": {"amount": 229.0, "currency": "EUR"}, "in_stock": True,
                   "variants": [{"sku": "AUR-Q35-MID", "color": "Midnight Black", "stock": 0,
                                 "restock_date": "2027-01-12"},
                                {"sku": "AUR-Q35-SND", "color": "Sand", "stock": 14}]}}, max_price=250)),
          text="Thanks, the receipt shows serial AQ35-7K2209-BLK. Let me check the Q35's stock.")
    c.say("The Q35 in Midnight Black is out of stock until January 12, but the same model in **Sand** is in stock "
          "at the same price, €229. If you'd rather wait or pick another model under €250, I can do that too. "
          "Shall I exchange yours for the Sand one?")
    c.user("Sand is fine. And if it ever comes to a refund on anything, put it on store credit, not back on the "
           "card, the card's being replaced next week.")
    c.act(Call("create_exchange", {"order_id": "ZX-48213-Q", "line_id": "L1", "new_sku": "AUR-Q35-SND",
                                   "reason": "defective: rattle in left earcup", "serial_number": "AQ35-7K2209-BLK"},
               {"exchange_id": "EX-30917", "status": "created", "replacement": {"sku": "AUR-Q35-SND",
                "ships": "2026-12-01", "carrier": "DHL"}, "price_difference": 0.0,
                "return": {"label_url": "https://voltbay.example/returns/EX-30917/label.pdf",
                           "due_by": "2026-12-15", "fee": 0.0}}))
    c.say("Done, exchange EX-30917: the Sand Q35 ships today at no cost, and the return label for the faulty pair "
          "is in the e-mail I'll send; please drop it at DHL by December 15.\n\n"
          "Now the dock: shall I open a trace with DHL? If they declare it lost, I can refund it or send a new one.")
    c.user("Yes please. If it's lost, just refund it, store credit as well.")
    c.act(Call("open_carrier_trace", {"tracking_number": "JJD0004471236671", "reason": "no scan for 5 days"},
               {"trace_id": "DHL-TR-771920", "status": "closed", "carrier_result": "lost",
                "carrier_note": "Parcel damaged in sorting at Leipzig hub on 2026-11-27 and disposed of. "
                                "Declared lost; sender may claim."}))
    c.act(Call("create_refund", {"order_id": "ZX-48877-Q", "line_ids": ["L1"], "method": "store_credit",
                                 "reason": "carrier declared parcel lost (DHL-TR-771920)"},
               {"refund_id": "RF-60318", "amount": 139.0, "currency": "EUR", "method": "store_credit",
                "status": "issued"}),
          text="DHL says the parcel was damaged in sorting at Leipzig and has been declared lost. As you asked, "
               "I'm refunding it as store credit.")
    c.act(Call("add_order_note", {"order_id": "ZX-48877-Q", "note": "Lost by DHL (trace DHL-TR-771920). Refunded "
                                  "€139 as store credit at customer's request. Contact by e-mail only."}, ""))
    c.act(Call("add_order_note", {"order_id": "ZX-48213-Q", "note": "Exchange EX-30917 (defective, rattle left "
                                  "earcup). Any refund as store credit: card being replaced. E-mail only."}, ""))
    c.act(Call("get_store_credit", {"customer_id": "C-5540912"},
               {"customer_id": "C-5540912", "balance": 151.5, "currency": "EUR",
                "movements": [{"date": "2026-11-30", "amount": 139.0, "reference": "RF-60318"},
                              {"date": "2026-03-14", "amount": 12.5, "reference": "GOODWILL-2201"}]}))
    c.act(Call("send_email", {"to": "tom.becker84@gmx.de", "subject": "Your exchange EX-30917 and refund RF-60318",
                              "body": "Hi Tom,\n\nYour replacement Auralis Q35 (Sand) ships today. Return label for "
                                      "the faulty pair: https://voltbay.example/returns/EX-30917/label.pdf (drop "
                                      "it at DHL by 15 December).\n\nDHL declared your Kestrel dock (ZX-48877-Q) "
                                      "lost; we refunded €139 as store credit. Your balance is now €151.50.\n\n"
                                      "Voltbay Support"}, ""))
    c.say("All sorted, Tom:\n- Dock: DHL declared it lost, so €139 is back as store credit (refund RF-60318). "
          "Your balance is now €151.50.\n- Headphones: the Sand Q35 ships today; return the faulty pair by Dec 15.\n"
          "I've noted on both orders to contact you by e-mail only, and sent you a summary at tom.becker84@gmx.de.")
    c.user("Could I use the credit to buy the dock again? Is it in stock?")
    c.act(Call("search_products", {"query": "Kestrel 12-in-1 USB-C dock", "max_price": 250, "in_stock_only": True},
               _products("orders-en/docks", "dock", 16, max_price=250, in_stock_only=True, fixed={0: {
                   "sku": "KES-12IN1", "name": "Kestrel 12-in-1 USB-C Dock", "brand": "Kestrel",
                   "price": {"amount": 134.99, "currency": "EUR"}, "in_stock": True,
                   "variants": [{"sku": "KES-12IN1-GRA", "color": "Graphite", "stock": 31}]}})))
    c.say("Yes: the Kestrel 12-in-1 in Graphite is in stock and now €134.99, four euros less than you paid. Your "
          "€151.50 of store credit covers it; choose 'store credit' at checkout.")
    c.user("great, I'll order it tonight. thanks!")
    c.say("You're welcome, Tom. Enjoy the new headphones!")
    return c.trace("en", ORDERS_TOOLS, given_ids=("ZX-48213-Q", "tom.becker84@gmx.de"),
                   constraints=("keep it to email, no phone calls", "something similar under €250",
                                "put it on store credit, not back on the card"))
