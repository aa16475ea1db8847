"""A write that depends on a flight's status is decided on the airline's status now, not on one read up to a
minute before (airline.pl: flight_status is fresh_for_writes). Before, flight_status was kept 60 seconds like
any read: an agent that looked at a reservation while its flight was still "available", and asked to cancel or
change it after the flight took off, was allowed on the status it had read ("If any portion of the flight has
already been flown, the agent cannot help and transfer to another agent").

The airline server in this process (permissive: its writes check nothing), so the test can make a flight take
off between two decisions; real SWI-Prolog and SQLite behind a PolicyGuard, decisions only. HKEG34:
mia_li_3668, business (cancellable whatever the reason), DEN-LAS one way on HAT290 2024-05-27, one passenger;
HAT084 flies DEN-LAS on 2024-05-26."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from tests.policy.airline_replay import AIRLINE_PL
from tests.policy.policy_rig import ClientPort, make_guard
from tests.policy.test_airline_policy_attacks import Airline, fresh_db

from examples.airline.models import FlightDateFlying, FlightDateLanded
from examples.airline.server import create_server
from sentinel_mcp.core.decision import Allow, Deny

pytestmark = [pytest.mark.timeout(120), pytest.mark.asyncio]

USER, RESERVATION, FLIGHT, DATE = "mia_li_3668", "HKEG34", "HAT290", "2024-05-27"
CANCEL = ("cancel_reservation", {"reservation_id": RESERVATION})
CHANGE = ("update_reservation_flights", {"reservation_id": RESERVATION, "cabin": "business",
                                         "flights": [{"flight_number": "HAT084", "date": "2024-05-26"}],
                                         "payment_id": "credit_card_4421486"})
WRITES = {"a cancel": CANCEL, "a flight change": CHANGE}
TOOK_OFF = {
    "flying": FlightDateFlying(status="flying", actual_departure_time_est="2024-05-27T06:00:00",
                               estimated_arrival_time_est="2024-05-27T08:00:00"),
    "landed": FlightDateLanded(status="landed", actual_departure_time_est="2024-05-27T06:00:00",
                               actual_arrival_time_est="2024-05-27T08:00:00"),
}


@pytest.mark.parametrize("status", list(TOOK_OFF), ids=list(TOOK_OFF))
@pytest.mark.parametrize("write", list(WRITES.values()), ids=list(WRITES))
async def test_a_flight_that_took_off_since_it_was_read_is_flown(
    write: tuple[str, dict[str, Any]], status: str, tmp_path: Path
) -> None:
    tool, args = write
    db = fresh_db()
    answers = {"cancel_reason": "change_of_plan"}
    async with Client(create_server(db, permissive=True), mode="auto") as client:
        port = ClientPort(client, prefix="airline")
        await port.refresh()
        guard = await make_guard(port, tmp_path / "facts.db", files=[AIRLINE_PL],
                                 seeds={"current_user": USER})
        try:
            air = Airline(port, guard)
            # the status read while the flight had not left: the write would be allowed
            assert isinstance(await air.decide(tool, args, answers), Allow)
            db.db.flights[FLIGHT].dates[DATE] = TOOK_OFF[status]
            d = await air.decide(tool, args, answers)
            assert isinstance(d, Deny) and any("already been flown" in u for u in d.unmet), d
        finally:
            await guard.close()
