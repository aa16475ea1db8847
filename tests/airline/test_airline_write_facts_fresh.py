"""A write is decided on the membership and the prices the airline holds now, not on a read kept for minutes
(airline.pl: user_membership, the searches' flights and prices are fresh_for_writes): bags added as free under
a gold allowance after the airline had the user as regular ('If the booking user is a regular member ... Each
extra baggage is 50 dollars'); a booking whose payments add up to the price a search showed a minute before,
not the price now; a flight change whose confirmation shows a refund where the airline charges. These reads
(300 and 60 seconds) were read again before only because each guard also read a fresh_for_writes binding of
the same call first; the bindings now say so themselves, and these tests hold the behaviour.

The airline server in this process (permissive: its writes check nothing), so the test changes the airline's
record between two decisions; real SWI-Prolog and SQLite behind a PolicyGuard, decisions only. HKEG34:
mia_li_3668 (gold), business, one passenger, no bags; HAT084 flies DEN-LAS on 2024-05-26 ($331 in
business)."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from tests.policy.airline_replay import AIRLINE_PL
from tests.policy.policy_rig import ClientPort, make_guard
from tests.policy.test_airline_policy_attacks import Airline, fresh_db

from examples.airline.database import AirlineDatabase
from examples.airline.server import create_server
from sentinel_mcp.core.decision import Allow, Ask, Deny

pytestmark = [pytest.mark.timeout(120), pytest.mark.asyncio]

USER, RESERVATION, CARD = "mia_li_3668", "HKEG34", "credit_card_4421486"
BAGS = ("update_reservation_baggages", {"reservation_id": RESERVATION, "total_baggages": 4,
                                        "nonfree_baggages": 0, "payment_id": CARD})
BOOK = ("book_reservation", {
    "user_id": USER, "origin": "DEN", "destination": "LAS", "flight_type": "one_way", "cabin": "business",
    "flights": [{"flight_number": "HAT084", "date": "2024-05-26"}],
    "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}],
    "payment_methods": [{"payment_id": CARD, "amount": 331}], "total_baggages": 0, "nonfree_baggages": 0,
    "insurance": "no"})


def _regular(db: AirlineDatabase) -> None:
    db.db.users[USER].membership = "regular"


def _dearer(db: AirlineDatabase) -> None:
    db.db.flights["HAT084"].dates["2024-05-26"].prices["business"] = 400  # type: ignore[union-attr]


CASES = {
    "bags after the membership fell": (BAGS, _regular, "the paid bags must be exactly"),
    "a booking after the price rose": (BOOK, _dearer, "the payments must add up to the price"),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_a_write_reads_membership_and_prices_again(case: str, tmp_path: Path) -> None:
    (tool, args), change, unmet = CASES[case]
    db = fresh_db()
    async with Client(create_server(db, permissive=True), mode="auto") as client:
        port = ClientPort(client, prefix="airline")
        await port.refresh()
        guard = await make_guard(port, tmp_path / "facts.db", files=[AIRLINE_PL],
                                 seeds={"current_user": USER})
        try:
            air = Airline(port, guard)
            # on what the airline holds when first read, the write is allowed (the allowed path)
            assert isinstance(await air.decide(tool, args), Allow)
            change(db)
            d = await air.decide(tool, args)
            assert isinstance(d, Deny) and any(unmet in u for u in d.unmet), d
        finally:
            await guard.close()




async def test_a_flight_change_shows_the_price_now(tmp_path: Path) -> None:
    change = {"reservation_id": RESERVATION, "cabin": "business", "payment_id": CARD,
              "flights": [{"flight_number": "HAT084", "date": "2024-05-26"}]}
    db = fresh_db()
    async with Client(create_server(db, permissive=True), mode="auto") as client:
        port = ClientPort(client, prefix="airline")
        await port.refresh()
        guard = await make_guard(port, tmp_path / "facts.db", files=[AIRLINE_PL],
                                 seeds={"current_user": USER})
        try:
            shown = []
            for _ in range(2):
                call = port.call_of("airline__update_reservation_flights", change, session_id="s1")
                d = await guard.decide(call)
                assert isinstance(d, Ask), d
                shown.append(d.questions[0].message)
                db.db.flights["HAT084"].dates["2024-05-26"].prices["business"] = 2000  # type: ignore[union-attr]
            # $331 for $1,395 paid, then $2,000: the user confirms the charge the airline will make
            assert "$1064 refunded" in shown[0] and "$605 charged now" in shown[1], shown
        finally:
            await guard.close()
