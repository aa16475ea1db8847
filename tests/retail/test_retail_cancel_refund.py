"""'Cancel pending order › the total will be refunded via the original payment method': the total, once.
An order whose payment was changed holds two payments and a refund in its history; its cancellation gives
back what each method still has paid (the total, to the method that pays now), never a payment the change
already refunded. Before, the cancel confirmation promised the total twice (to the gift card the change had
refunded, and to PayPal) and the store credited the gift card again: the agent turned a payment change and a
cancellation, each with the user's yes, into store credit out of nothing (once the total with the permissive
server, twice with the API's checks). Real gateway, real retail subprocess, real SWI-Prolog."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.retail.retail_rig import OLIVIA, YES, conversation, data_of, order, retail_runtime, text_of
from tests.retail.test_retail_reads import ConsentingUser

pytestmark = pytest.mark.timeout(180)

# olivia_ito_3591's #W3657213, pending, paid $3570.34 by her gift card (balance $56 besides)
ORDER, TOTAL, GIFT, PAYPAL = "#W3657213", 3570.34, "gift_card_7794233", "paypal_8049766"


async def gift_balance(c: Any) -> float:
    r = await c.call_tool("retail__get_user_details", {"user_id": "olivia_ito_3591"})
    return float(data_of(r)["payment_methods"][GIFT]["balance"])


@pytest.mark.parametrize("permissive", [True, False], ids=["permissive", "api-checks"])
async def test_a_cancellation_after_a_payment_change_refunds_the_total_once(
    tmp_path: Path, permissive: bool
) -> None:
    user = ConsentingUser([OLIVIA, *YES])
    async with retail_runtime(tmp_path, permissive=permissive) as rt, conversation(rt, user) as c:
        r = await c.call_tool(
            "retail__modify_pending_order_payment", {"order_id": ORDER, "payment_method_id": PAYPAL}
        )
        assert not r.is_error, text_of(r)
        after_change = await gift_balance(c)
        assert after_change == round(56 + TOTAL, 2)
        r = await c.call_tool(
            "retail__cancel_pending_order", {"order_id": ORDER, "reason": "no longer needed"}
        )
        assert not r.is_error, text_of(r)
        (asked,) = [m for m in user.messages() if m.startswith("Cancel this order?")]
        refund = asked.split("Refund: ", 1)[1]
        assert refund == "$3570.34 to PayPal account 8049766, within 5 to 7 business days.", asked
        # the gift card was paid back by the change; the cancellation gives it nothing more
        assert await gift_balance(c) == after_change
        history = (await order(c, ORDER))["payment_history"]
        refunded = sum(p["amount"] for p in history if p["transaction_type"] == "refund")
        paid = sum(p["amount"] for p in history if p["transaction_type"] == "payment")
        assert round(paid - refunded, 2) == 0, history


@pytest.mark.parametrize("permissive", [True, False], ids=["permissive", "api-checks"])
async def test_a_cancellation_of_an_order_paid_once_refunds_its_payment(
    tmp_path: Path, permissive: bool
) -> None:
    """The usual case stays as it was: one payment, refunded whole to its method (a gift card at once)."""
    user = ConsentingUser([OLIVIA, *YES])
    async with retail_runtime(tmp_path, permissive=permissive) as rt, conversation(rt, user) as c:
        r = await c.call_tool(
            "retail__cancel_pending_order", {"order_id": ORDER, "reason": "no longer needed"}
        )
        assert not r.is_error, text_of(r)
        (asked,) = [m for m in user.messages() if m.startswith("Cancel this order?")]
        assert asked.split("Refund: ", 1)[1] == "$3570.34 to gift card 7794233, at once.", asked
        assert await gift_balance(c) == round(56 + TOTAL, 2)
