"""'The user can modify passengers but cannot modify the number of passengers. Even a human agent cannot
modify the number of passengers.' (airline policy.md): a reservation's passengers are counted one per place in
its list, not one per distinct name and birth date. Before, passenger_count/2 counted the distinct facts of
reservation_passenger/4, and a reservation of one person listed twice (which a booking may hold: the policy
forbids no such list, and the airline takes it) counted one: an agent booked two seats and then "modified the
passengers" to one, and the passenger count changed; the same count priced a flight change and its seats for
one passenger instead of two.

Through the real gateway, over the permissive airline server (its writes check nothing) in a subprocess, real
SWI-Prolog and SQLite; a user who says yes to everything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.airline.test_airline_passenger_names import BOOK, _config
from tests.retail.retail_rig import AnsweringUser, conversation, text_of

from sentinel_mcp.app.runtime import running_gateway

pytestmark = pytest.mark.timeout(180)

MIA = {"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}
OMAR = {"first_name": "Omar", "last_name": "Rossi", "dob": "1985-02-11"}
YES = [("Book this reservation?", True), ("Update the passengers of this reservation?", True)]


async def test_a_passenger_listed_twice_counts_twice(tmp_path: Path) -> None:
    booking = BOOK | {"passengers": [MIA, MIA], "payment_methods": [{"payment_id": BOOK["payment_methods"][0]
                                                                     ["payment_id"], "amount": 208}]}
    async with running_gateway(_config(tmp_path)) as rt:
        async with conversation(rt, AnsweringUser(list(YES))) as c:
            r = await c.call_tool("airline__book_reservation", booking)
            assert not r.is_error, text_of(r)
            rid = json.loads(text_of(r))["reservation_id"]
            for fewer in ([MIA], [OMAR]):
                r = await c.call_tool("airline__update_reservation_passengers",
                                      {"reservation_id": rid, "passengers": fewer})
                assert r.is_error and "Sentinel refused this call" in text_of(r), text_of(r)
                assert "the number of passengers cannot change" in text_of(r), text_of(r)
            held = json.loads(text_of(await c.call_tool("airline__get_reservation_details",
                                                        {"reservation_id": rid})))
            assert held["passengers"] == [MIA, MIA], held
            # the allowed path beside it: the two places, one given to another person
            r = await c.call_tool("airline__update_reservation_passengers",
                                  {"reservation_id": rid, "passengers": [MIA, OMAR]})
            assert not r.is_error, text_of(r)
