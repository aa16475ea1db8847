"""Writes of two conversations of the same user at the same time, on one order: decided one after the other,
each on what the other did. 'Modify items › This action can only be called once', 'An order can only be
cancelled if its status is 'pending'', 'The user can only choose a single payment method', 'Exchange or modify
order tools can only be called once per order'. Before, each conversation's write was decided on the store
as it was before the other's ran (a conversation's writes took turns only among themselves), and both went
through: items modified twice, an order cancelled (and refunded) twice, its payment switched twice.

One gateway over the permissive retail server (only the guard stands in the way) for the module; each race
is on an order of its own; the user says yes to everything."""

from __future__ import annotations

from typing import Any, AsyncIterator

import anyio
import pytest
import pytest_asyncio
from tests.retail.retail_rig import OLIVIA, YES, AnsweringUser, conversation, held_runtime, order, text_of

pytestmark = [pytest.mark.timeout(180), pytest.mark.asyncio(loop_scope="module")]

PAYPAL, VISA = "paypal_8049766", "credit_card_9753331"
WATCH, BACKPACK = "1355937109", "5917587651"  # #W7941031 (pending, paid by the Visa card)
SNEAKERS, ESPRESSO = "9727387530", "6242772310"  # #W5866402 (delivered, paid by PayPal)


def _items(tool: str, oid: str, old: str, new: str) -> tuple[str, dict[str, Any]]:
    return tool, {"order_id": oid, "item_ids": [old], "new_item_ids": [new], "payment_method_id": PAYPAL}


MODIFY, EXCHANGE = "retail__modify_pending_order_items", "retail__exchange_delivered_order_items"
# yara_silva_7567: a gift card ($56), her only payment method; #W9810810, #W9034102 pending; #W3964602
# delivered
YARA, YARAS_GIFT = ("email address of your account", "yara.silva2443@example.com"), "gift_card_7252880"
RACES: dict[str, tuple[str, list[tuple[str, dict[str, Any]]]]] = {
    "modify, modify": ("#W7941031", [_items(MODIFY, "#W7941031", WATCH, "2226219750"),
                                     _items(MODIFY, "#W7941031", BACKPACK, "3928046918")]),
    "cancel, cancel": ("#W5442520", [("retail__cancel_pending_order",
                                      {"order_id": "#W5442520", "reason": "no longer needed"})] * 2),
    # #W3657213 was paid by the gift card: to PayPal in one conversation, to the Visa card in the other
    "payment, payment": ("#W3657213", [
        ("retail__modify_pending_order_payment", {"order_id": "#W3657213", "payment_method_id": PAYPAL}),
        ("retail__modify_pending_order_payment", {"order_id": "#W3657213", "payment_method_id": VISA})]),
    "return, exchange": ("#W5866402", [
        ("retail__return_delivered_order_items",
         {"order_id": "#W5866402", "item_ids": [SNEAKERS], "payment_method_id": PAYPAL}),
        _items(EXCHANGE, "#W5866402", ESPRESSO, "3709608322")]),
}
# Yara's: the same exchange in two conversations at once (a cycling helmet for another, $12.36 back to her
# gift card)
YARAS_RACES = {"exchange, exchange": ("#W3964602", [(EXCHANGE, {
    "order_id": "#W3964602", "item_ids": ["7907773809"], "new_item_ids": ["3358616356"],
    "payment_method_id": YARAS_GIFT})] * 2)}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def runtime(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Any]:
    async for rt in held_runtime(tmp_path_factory.mktemp("retail")):
        yield rt


@pytest.mark.parametrize("case", sorted(RACES) + sorted(YARAS_RACES))
async def test_one_write_of_two_conversations_at_once_goes_through(runtime: Any, case: str) -> None:
    who = YARA if case in YARAS_RACES else OLIVIA
    oid, calls = YARAS_RACES[case] if case in YARAS_RACES else RACES[case]
    async with conversation(runtime, AnsweringUser([who, *YES])) as a, \
            conversation(runtime, AnsweringUser([who, *YES])) as b:
        # both know the user and have read the order before the race
        before = await order(a, oid)
        assert await order(b, oid) == before
        results: list[Any] = []

        async def call(c: Any, name: str, args: dict[str, Any]) -> None:
            results.append(await c.call_tool(name, args))

        async with anyio.create_task_group() as tg:
            for c, (name, args) in zip((a, b), calls):
                tg.start_soon(call, c, name, args)
        after = await order(a, oid)
    assert sorted(r.is_error for r in results) == [False, True], [text_of(r)[:300] for r in results]
    refused = next(r for r in results if r.is_error)
    assert "Sentinel refused this call" in text_of(refused), text_of(refused)
    # one write's worth of change in the store: one payment and its refund at most, one item changed
    assert len(after["payment_history"]) - len(before["payment_history"]) <= 2, after["payment_history"]
    changed = sum(x["item_id"] != y["item_id"] for x, y in zip(after["items"], before["items"]))
    assert changed <= 1, after["items"]


async def test_a_gift_card_pays_what_it_holds_for_two_orders_at_once(runtime: Any) -> None:
    """'If the user provides a gift card, it must have enough balance to cover the price difference': two
    conversations of Yara's each modify an order of hers, both paid by her gift card ($56), each difference
    ($40.21, $35.75) within the balance, together more: one goes through, the other is decided on the balance
    the first left."""
    calls = [("#W9810810", WATCH, "1994478369"), ("#W9034102", "6501071631", "2235648106")]
    async with conversation(runtime, AnsweringUser([YARA, *YES])) as a, \
            conversation(runtime, AnsweringUser([YARA, *YES])) as b:
        before = [await order(c, oid) for c, (oid, _, _) in zip((a, b), calls)]
        assert all(o["status"] == "pending" for o in before)
        results: list[Any] = []

        async def call(c: Any, oid: str, old: str, new: str) -> None:
            args = {"order_id": oid, "item_ids": [old], "new_item_ids": [new],
                    "payment_method_id": YARAS_GIFT}
            results.append(await c.call_tool(MODIFY, args))

        async with anyio.create_task_group() as tg:
            for c, args in zip((a, b), calls):
                tg.start_soon(call, c, *args)
        after = [await order(a, oid) for oid, _, _ in calls]
    assert sorted(r.is_error for r in results) == [False, True], [text_of(r)[:300] for r in results]
    refused = next(r for r in results if r.is_error)
    assert "the gift card balance does not cover the price difference" in text_of(refused), text_of(refused)
    assert sum(len(x["payment_history"]) - len(y["payment_history"]) for x, y in zip(after, before)) == 1
