"""'Checked bag allowance' (airline policy.md): 0, 1 and 2 free checked bags per basic economy, economy and
business passenger of a regular member, one more in each cabin for a silver member, two more for a gold
member; 'Each extra baggage is 50 dollars.' Every cell of that table, at its edge: bags up to the allowance
are added free, and one bag more must be paid, through the airline's own records (its membership and cabin
read again for the write: test_airline_write_facts_fresh). Negative, fractional, textual and other non-integer
counts are test_airline_policy_attacks' (test_bag_updates_that_break_the_policy_are_denied and neighbours).

The airline server in this process (permissive: its writes check nothing), its records changed between
decisions; real SWI-Prolog and SQLite behind a PolicyGuard, decisions only. HKEG34: mia_li_3668, one
passenger, no bags."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from tests.policy.airline_replay import AIRLINE_PL
from tests.policy.policy_rig import ClientPort, make_guard
from tests.policy.test_airline_policy_attacks import Airline, fresh_db

from examples.airline.server import create_server
from sentinel_mcp.core.decision import Allow, Deny

pytestmark = [pytest.mark.timeout(180), pytest.mark.asyncio]

USER, RESERVATION, CARD = "mia_li_3668", "HKEG34", "credit_card_4421486"
ALLOWANCE = {("regular", "basic_economy"): 0, ("regular", "economy"): 1, ("regular", "business"): 2,
             ("silver", "basic_economy"): 1, ("silver", "economy"): 2, ("silver", "business"): 3,
             ("gold", "basic_economy"): 2, ("gold", "economy"): 3, ("gold", "business"): 4}


async def test_every_cell_of_the_allowance(tmp_path: Path) -> None:
    db = fresh_db()
    async with Client(create_server(db, permissive=True), mode="auto") as client:
        port = ClientPort(client, prefix="airline")
        await port.refresh()
        guard = await make_guard(port, tmp_path / "facts.db", files=[AIRLINE_PL],
                                 seeds={"current_user": USER})
        try:
            air = Airline(port, guard)
            for (membership, cabin), free in ALLOWANCE.items():
                db.db.users[USER].membership = membership  # type: ignore[assignment]
                db.db.reservations[RESERVATION].cabin = cabin  # type: ignore[assignment]
                bags = {"reservation_id": RESERVATION, "payment_id": CARD}
                seen = []
                for total, paid in ((free, 0), (free + 1, 1), (free + 1, 0), (free, 1)):
                    d = await air.decide("update_reservation_baggages",
                                         bags | {"total_baggages": total, "nonfree_baggages": paid})
                    seen.append(isinstance(d, Allow))
                    if (total, paid) in ((free + 1, 0), (free, 1)):
                        assert isinstance(d, Deny) and any("paid bags" in u for u in d.unmet), d
                assert seen[:2] == [True, True], (membership, cabin, seen)
        finally:
            await guard.close()
