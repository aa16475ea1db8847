"""Writes of one conversation called at the same time (a hostile agent's parallel calls) are decided one after
the other, each on what the ones before it did: an order's items are modified once, a payment changed once, a
delivered order returned or exchanged once, whatever the number of parallel calls. The upstream is the
permissive retail server, so only the guard stands in the way. (Before, each parallel call was decided on the
facts from before the others ran, and all of them went through.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.retail.retail_rig import OLIVIA, AnsweringUser, data_of, retail_gateway, text_of

pytestmark = pytest.mark.timeout(120)

YES = [
    OLIVIA,
    ("Why do you want to cancel", "no longer needed"),
    ("Cancel this order?", True),
    ("Modify the items of this order?", True),
    ("Change the payment method", True),
    ("Return these items?", True),
    ("Exchange these items?", True),
]
WATCH, BACKPACK = "1355937109", "5917587651"  # the two items of #W7941031 (pending)
SNEAKERS, ESPRESSO = "9727387530", "6242772310"  # two items of #W5866402 (delivered, paid by PayPal)


def modify(old: str, new: str) -> tuple[str, dict[str, Any]]:
    return "retail__modify_pending_order_items", {
        "order_id": "#W7941031", "item_ids": [old], "new_item_ids": [new],
        "payment_method_id": "paypal_8049766"}


PARALLEL = {
    # the items of one order modified in two calls (each a different item)
    "modify, modify": ("#W7941031", [modify(WATCH, "2226219750"), modify(BACKPACK, "3928046918")]),
    # the same modification, three times
    "modify x3": ("#W7941031", [modify(WATCH, "2226219750")] * 3),
    # a cancellation beside a modification of the same order
    "cancel, modify": ("#W7941031", [("retail__cancel_pending_order", {"order_id": "#W7941031",
                                                                       "reason": "no longer needed"}),
                                     modify(WATCH, "2226219750")]),
    # the payment of one order changed three times (to PayPal; the order was paid once, by the Visa card)
    "payment x3": ("#W5442520", [("retail__modify_pending_order_payment",
                                  {"order_id": "#W5442520", "payment_method_id": "paypal_8049766"})] * 3),
    # a delivered order returned and exchanged at once
    "return, exchange": ("#W5866402", [
        ("retail__return_delivered_order_items",
         {"order_id": "#W5866402", "item_ids": [SNEAKERS], "payment_method_id": "paypal_8049766"}),
        ("retail__exchange_delivered_order_items",
         {"order_id": "#W5866402", "item_ids": [ESPRESSO], "new_item_ids": ["3709608322"],
          "payment_method_id": "paypal_8049766"})]),
}


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("case", sorted(PARALLEL))
async def test_parallel_writes_on_one_order_go_through_once(tmp_path: Path, mode: str, case: str) -> None:
    oid, calls = PARALLEL[case]
    async with retail_gateway(tmp_path, AnsweringUser(YES), mode=mode) as c:
        # the user is known before the race (the email asked once, by a call refused for its own reason)
        r = await c.call_tool("retail__modify_user_address", {
            "user_id": "emma_smith_8564", "address1": "x", "address2": "", "city": "x", "state": "x",
            "country": "x", "zip": "x"})
        assert r.is_error and "one user per conversation" in text_of(r), text_of(r)
        before = data_of(await c.call_tool("retail__get_order_details", {"order_id": oid}))
        results: list[Any] = []

        async def call(name: str, args: dict[str, Any]) -> None:
            results.append(await c.call_tool(name, args))

        async with anyio.create_task_group() as tg:
            for name, args in calls:
                tg.start_soon(call, name, args)
        after = data_of(await c.call_tool("retail__get_order_details", {"order_id": oid}))
    done = [r for r in results if not r.is_error]
    assert len(done) == 1, [text_of(r)[:300] for r in results]
    for r in results:
        if r.is_error:  # refused by the rule the first write made true, not by chance
            assert "Sentinel refused this call" in text_of(r), text_of(r)
    # one write's worth of change in the store
    assert len(after["payment_history"]) - len(before["payment_history"]) <= 2
    changed = sum(a["item_id"] != b["item_id"] for a, b in zip(after["items"], before["items"]))
    assert changed <= 1, after["items"]
