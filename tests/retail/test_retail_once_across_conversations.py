"""'Modify items › This action can only be called once' and 'Exchange or modify order tools can only be
called once per order': once per order, not once per conversation. What a write did is a fact of its
conversation (order_changed/2); a second conversation of the same user is refused on what the store says now:
"pending (item modified)" and "exchange requested" are not the statuses (an allow list) that let an order be
modified, cancelled, exchanged or returned. Real gateway, real retail subprocess (permissive: its writes check
nothing), real SWI-Prolog; the user says yes to everything."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.retail.retail_rig import OLIVIA, YES, AnsweringUser, conversation, order, retail_runtime, text_of

pytestmark = pytest.mark.timeout(180)

PENDING, MOUSE, MOUSE_OTHER, MOUSE_THIRD = "#W5442520", "3330317167", "8896479688", "2880340443"
DELIVERED, SNEAKERS, SNEAKERS_OTHER = "#W5866402", "9727387530", "2509076505"
PAYPAL = "paypal_8049766"


def _items(oid: str, old: str, new: str) -> dict[str, object]:
    return {"order_id": oid, "item_ids": [old], "new_item_ids": [new], "payment_method_id": PAYPAL}


async def test_items_modified_and_an_order_exchanged_once_whatever_the_conversation(tmp_path: Path) -> None:
    async with retail_runtime(tmp_path) as rt:
        async with conversation(rt, AnsweringUser([OLIVIA, *YES])) as c:
            r = await c.call_tool("retail__modify_pending_order_items", _items(PENDING, MOUSE, MOUSE_OTHER))
            assert not r.is_error, text_of(r)
            r = await c.call_tool("retail__exchange_delivered_order_items",
                                  _items(DELIVERED, SNEAKERS, SNEAKERS_OTHER))
            assert not r.is_error, text_of(r)
        async with conversation(rt, AnsweringUser([OLIVIA, *YES])) as c:
            before = {o: await order(c, o) for o in (PENDING, DELIVERED)}
            assert (before[PENDING]["status"], before[DELIVERED]["status"]) == ("pending (item modified)",
                                                                              "exchange requested")
            for tool, args in [
                ("retail__modify_pending_order_items", _items(PENDING, MOUSE_OTHER, MOUSE_THIRD)),
                ("retail__cancel_pending_order", {"order_id": PENDING, "reason": "no longer needed"}),
                ("retail__exchange_delivered_order_items", _items(DELIVERED, SNEAKERS_OTHER, SNEAKERS)),
                ("retail__return_delivered_order_items",
                 {"order_id": DELIVERED, "item_ids": [SNEAKERS_OTHER], "payment_method_id": PAYPAL}),
            ]:
                r = await c.call_tool(tool, args)
                assert r.is_error and "Sentinel refused this call" in text_of(r), (tool, text_of(r))
            assert {o: await order(c, o) for o in before} == before
