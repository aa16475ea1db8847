"""Sequences of writes in one conversation (permissive retail server, so only the guard stands in the way):
each write is decided on what the earlier ones left, as the store says it now. Each test names the sentence
of policy.md it defends."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.retail.retail_rig import OLIVIA, YES, AnsweringUser, conversation, order, retail_runtime, text_of

pytestmark = pytest.mark.timeout(180)

GIFT_CARD = "gift_card_7794233"  # Olivia's, $56


def address(city: str) -> dict[str, str]:
    return {
        "address1": "1 Main St", "address2": "", "city": city, "state": "CO", "country": "USA", "zip": "80301"
    }


async def test_a_gift_card_pays_only_what_an_earlier_write_left_on_it(tmp_path: Path) -> None:
    """'Modify items › If the user provides a gift card, it must have enough balance to cover the price
    difference': the gift card ($56) pays $23.73 for a watch of #W7941031; what is left ($32.27) does not
    cover the $44.19 of an umbrella of #W5442520, though the $56 it had did."""
    user = AnsweringUser([OLIVIA, *YES])
    async with retail_runtime(tmp_path) as rt, conversation(rt, user) as c:
        r = await c.call_tool(
            "retail__modify_pending_order_items",
            {"order_id": "#W7941031", "item_ids": ["1355937109"], "new_item_ids": ["2226219750"],
             "payment_method_id": GIFT_CARD},
        )
        assert not r.is_error, text_of(r)
        r = await c.call_tool(
            "retail__modify_pending_order_items",
            {"order_id": "#W5442520", "item_ids": ["3111466194"], "new_item_ids": ["6243981804"],
             "payment_method_id": GIFT_CARD},
        )
        assert r.is_error and "does not cover the price difference" in text_of(r), text_of(r)
        assert (await order(c, "#W5442520"))["status"] == "pending"


async def test_a_gift_card_refunded_by_a_cancellation_pays_for_a_payment_change(tmp_path: Path) -> None:
    """'Cancel pending order › the total will be refunded via the original payment method immediately if it is
    gift card' / 'Modify payment › it must have enough balance to cover the total amount': cancelling
    #W3657213 (paid by the gift card) puts its $3570.34 back at once, so the card ($56 before) now covers
    #W5442520's $663.85."""
    user = AnsweringUser([OLIVIA, *YES])
    async with retail_runtime(tmp_path) as rt, conversation(rt, user) as c:
        change = {"order_id": "#W5442520", "payment_method_id": GIFT_CARD}
        r = await c.call_tool("retail__modify_pending_order_payment", change)
        assert r.is_error and "does not cover the order total" in text_of(r), text_of(r)
        r = await c.call_tool(
            "retail__cancel_pending_order", {"order_id": "#W3657213", "reason": "no longer needed"}
        )
        assert not r.is_error, text_of(r)
        r = await c.call_tool("retail__modify_pending_order_payment", change)
        assert not r.is_error, text_of(r)


async def test_repeated_address_changes_each_show_the_address_as_it_is_now(tmp_path: Path) -> None:
    """'you must list the action details' / 'You should not make up any information': the policy sets no
    limit on changing a pending order's address, and each confirmation shows the address the order has now
    (the one the previous change wrote), never the one read before it."""
    user = AnsweringUser([OLIVIA, *YES])
    async with retail_runtime(tmp_path) as rt, conversation(rt, user) as c:
        for city in ["Boulder", "Aurora", "Golden"]:
            args = {"order_id": "#W5442520", **address(city)}
            r = await c.call_tool("retail__modify_pending_order_address", args)
            assert not r.is_error, text_of(r)
        first, second, third = (m for m in user.messages() if m.startswith("Change the shipping address"))
        # the street, more than one word, reads as one quoted value (readable_terms.pl)
        assert "Shipping address now: \u201c1 Main St\u201d, Boulder" in second, second
        assert "Shipping address now: \u201c1 Main St\u201d, Aurora" in third, third
        assert (await order(c, "#W5442520"))["address"]["city"] == "Golden"


async def test_payment_then_items_then_nothing(tmp_path: Path) -> None:
    """'For a pending order, you can take actions to modify its shipping address, payment method, or product
    item options' / 'Modify items › The agent will not be able to modify or cancel the order anymore': a
    payment change keeps the order pending (its items may still be modified), the item change ends every
    other change of the order, and the payment is changed only once."""
    user = AnsweringUser([OLIVIA, *YES])
    async with retail_runtime(tmp_path) as rt, conversation(rt, user) as c:
        r = await c.call_tool(
            "retail__modify_pending_order_payment",
            {"order_id": "#W5442520", "payment_method_id": "paypal_8049766"},
        )
        assert not r.is_error, text_of(r)
        r = await c.call_tool(
            "retail__modify_pending_order_payment",
            {"order_id": "#W5442520", "payment_method_id": "credit_card_9753331"},
        )
        assert r.is_error and "paid with a single payment method" in text_of(r), text_of(r)
        r = await c.call_tool(
            "retail__modify_pending_order_items",
            {"order_id": "#W5442520", "item_ids": ["3330317167"], "new_item_ids": ["8896479688"],
             "payment_method_id": "paypal_8049766"},
        )
        assert not r.is_error, text_of(r)
        for name, args in [
            ("retail__modify_pending_order_address", {"order_id": "#W5442520", **address("Aurora")}),
            ("retail__cancel_pending_order", {"order_id": "#W5442520", "reason": "ordered by mistake"}),
            (
                "retail__modify_pending_order_items",
                {"order_id": "#W5442520", "item_ids": ["3111466194"], "new_item_ids": ["2001307871"],
                 "payment_method_id": "paypal_8049766"},
            ),
        ]:
            r = await c.call_tool(name, args)
            assert r.is_error and "Sentinel refused this call" in text_of(r), (name, text_of(r))
        after = await order(c, "#W5442520")
        assert after["status"] == "pending (item modified)" and after["address"]["city"] == "Denver"
