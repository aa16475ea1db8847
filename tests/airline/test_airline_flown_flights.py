"""'If any portion of the flight has already been flown, the agent cannot help' and 'a flight that has already
been flown cannot be changed' (airline.pl): a flight change is decided on every flight of the reservation, not
only on the flights the agent lists. Dropping a flight that is in the air (or landed) from the list and naming
a later one in its place is a change of the flown flight: the old price is refunded and a new seat given.
Through the real gateway, over the permissive airline server (its writes check nothing) in a subprocess, real
SWI-Prolog and SQLite; a user who says yes to everything. MLPSXM: mia_li_8815, economy, round trip ATL-DFW,
four passengers: HAT004 on 2024-05-15 is flying, HAT177 on 2024-05-16 (back) is available. Each
change here (a later ATL-DFW flight, and HAT282 back) is allowed but for the flight in the air."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.retail.retail_rig import AnsweringUser, conversation, text_of

from sentinel_mcp.app.runtime import running_gateway
from tests.airline.airline_config import permissive_airline_config

pytestmark = pytest.mark.timeout(180)

USER, RESERVATION, CARD = "mia_li_8815", "MLPSXM", "credit_card_6719194"
FLYING = {"flight_number": "HAT004", "date": "2024-05-15"}
LATER = {"flight_number": "HAT004", "date": "2024-05-16"}  # ATL-DFW, economy $132 (the flying one cost $199)
BACK = {"flight_number": "HAT282", "date": "2024-05-17"}  # DFW-ATL, seats for four in economy and business
YES = [("Change the flights of this reservation?", True)]


def _config(data_dir: Path, user: str = USER) -> Any:
    return permissive_airline_config(data_dir, user)


def _change(flights: Any, cabin: Any = "economy") -> dict[str, Any]:
    return {"reservation_id": RESERVATION, "cabin": cabin, "flights": flights, "payment_id": CARD}


# every list that leaves out the flying flight, in the orders and shapes an agent could send
DROPPED = {
    "a later flight in its place": [LATER, BACK],
    "a later flight, in business": ("business", [LATER, BACK]),  # (the cabin rule refused this one already)
}


@pytest.mark.parametrize("flights", list(DROPPED.values()), ids=list(DROPPED))
async def test_a_flying_flight_is_not_replaced(flights: Any, tmp_path: Path) -> None:
    cabin, flights = flights if isinstance(flights, tuple) else ("economy", flights)
    async with running_gateway(_config(tmp_path)) as rt:
        async with conversation(rt, AnsweringUser(list(YES))) as c:
            before = text_of(await c.call_tool("airline__get_reservation_details",
                                               {"reservation_id": RESERVATION}))
            assert json.loads(before)["flights"][0]["flight_number"] == "HAT004", before
            r = await c.call_tool("airline__update_reservation_flights", _change(flights, cabin))
            assert r.is_error and "Sentinel refused this call" in text_of(r), text_of(r)
            assert "already been flown" in text_of(r), text_of(r)
            after = text_of(await c.call_tool("airline__get_reservation_details",
                                              {"reservation_id": RESERVATION}))
            assert json.loads(after) == json.loads(before)


async def test_a_kept_flight_needs_no_seats_again(tmp_path: Path) -> None:
    """The allowed path beside the attack: a flight kept in the same cabin keeps its passengers' seats (the
    airline checks seats only for new flights), so a flight full now does not stop changing the other one.
    5RJ7UH: omar_rossi_1241, economy, round trip LAX-SFO, two passengers; HAT163 on 2024-05-29 (back) has no
    economy seat left. Before, the change of the way out was refused ('not enough seats')."""
    kept = {"flight_number": "HAT163", "date": "2024-05-29"}
    change = {"reservation_id": "5RJ7UH", "cabin": "economy", "payment_id": "credit_card_6754990",
              "flights": [{"flight_number": "HAT034", "date": "2024-05-25"}, kept]}
    async with running_gateway(_config(tmp_path, "omar_rossi_1241")) as rt:
        async with conversation(rt, AnsweringUser(list(YES))) as c:
            r = await c.call_tool("airline__update_reservation_flights", change)
            assert not r.is_error, text_of(r)
            done = json.loads(text_of(await c.call_tool("airline__get_reservation_details",
                                                        {"reservation_id": "5RJ7UH"})))
            assert [(f["flight_number"], f["date"]) for f in done["flights"]] == [
                ("HAT034", "2024-05-25"), ("HAT163", "2024-05-29")]
