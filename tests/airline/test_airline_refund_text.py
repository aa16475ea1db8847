"""'The refund will go to original payment methods within 5 to 7 business days.': the refund a cancel's
confirmation shows is every payment of the reservation, one per entry of its payment history. Before, the
payments were facts of (method, amount), so two equal payments by one card (two bags added one at a time) were
one, and the user was asked to confirm a refund $50 short of the one the airline makes.

Through the real gateway, over the permissive airline server (its writes check nothing) in a subprocess, real
SWI-Prolog and SQLite. HKEG34: mia_li_3668 (gold: 4 free bags a business passenger), business, one passenger,
no bags, paid $1395 by credit card 1955700."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.retail.retail_rig import AnsweringUser, conversation, text_of

from sentinel_mcp.app.runtime import running_gateway
from tests.airline.airline_config import permissive_airline_config

pytestmark = pytest.mark.timeout(180)

USER, RESERVATION, CARD = "mia_li_3668", "HKEG34", "credit_card_4421486"


def _config(data_dir: Path) -> Any:
    return permissive_airline_config(data_dir, USER)


async def test_two_equal_payments_are_both_refunded_in_the_confirmation(tmp_path: Path) -> None:
    user = AnsweringUser([("Update the checked bags", True), ("Why do you want to cancel", "change_of_plan"),
                          ("Cancel this reservation?", False)])
    async with running_gateway(_config(tmp_path)) as rt:
        async with conversation(rt, user) as c:
            for total, paid in ((5, 1), (6, 2)):  # a fifth bag, then a sixth: $50 each, by the same card
                r = await c.call_tool("airline__update_reservation_baggages",
                                      {"reservation_id": RESERVATION, "total_baggages": total,
                                       "nonfree_baggages": paid, "payment_id": CARD})
                assert not r.is_error, text_of(r)
            r = await c.call_tool("airline__cancel_reservation", {"reservation_id": RESERVATION})
            assert r.is_error, text_of(r)  # the user said no
    [question] = [m for m in user.messages() if m.startswith("Cancel this reservation?")]
    assert "Refund: $1495 to the original payment methods" in question, question
