"""'Modify items › ... this action can only be called once' when the first modification's answer never came
(the gateway timed it out, or the caller gave up on it): the write may have run, so what it would establish
(``order_changed``) is recorded and a second modification of the order is refused, even from a store that
still says "pending". The upstream here does the write and never answers (tests/retail/unanswered_writes.py).

Before, such a write only invalidated the order's facts; the guard read the status again, found "pending",
and let a second modification of the same order through."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.retail.retail_rig import OLIVIA, AnsweringUser, conversation, retail_runtime, text_of
from tests.upstream_marker import give_up_once_marked, marked, once_marked

from sentinel_mcp.gateway.audit import read_audit

pytestmark = pytest.mark.timeout(180)

ORDER = "#W5442520"  # Olivia's, pending, three items
FIRST = {"order_id": ORDER, "item_ids": ["3330317167"], "new_item_ids": ["8896479688"],
         "payment_method_id": "credit_card_9753331"}
SECOND = {"order_id": ORDER, "item_ids": ["3111466194"], "new_item_ids": ["2001307871"],
          "payment_method_id": "credit_card_9753331"}
YES = [OLIVIA, ("Modify the items of this order?", True)]


def ran(marker: Path) -> list[str]:
    return marked(marker)


@pytest.mark.parametrize("how", ["gateway_timeout", "caller_gives_up"])
async def test_items_are_modified_only_once_after_a_modification_whose_answer_never_came(
    tmp_path: Path, how: str
) -> None:
    marker = tmp_path / "marker"
    stall = "3600" if how == "gateway_timeout" else "6"
    server = ["-m", "tests.retail.unanswered_writes", str(marker), stall]
    timeout = 2.0 if how == "gateway_timeout" else 600.0
    user = AnsweringUser(YES)
    # a caller's cancellation reaches Sentinel over a connection (the handshake era)
    mode = "auto" if how == "gateway_timeout" else "legacy"
    async with retail_runtime(tmp_path, server=server, timeout=timeout) as rt, \
            conversation(rt, user, mode=mode) as c:
        before = await c.call_tool("retail__get_order_details", {"order_id": ORDER})  # the conversation's id
        assert '"status": "pending"' in text_of(before), text_of(before)
        if how == "gateway_timeout":
            first = await c.call_tool("retail__modify_pending_order_items", FIRST)
            # the caller's answer is as before: the call timed out, nothing about what it did
            assert first.is_error and "did not answer" in text_of(first), text_of(first)
            assert first.meta["sentinel/error"] == "timeout", first.meta
        else:  # the caller gives up; the upstream did it all the same
            modify = "retail__modify_pending_order_items"
            await give_up_once_marked(marker, lambda: c.call_tool(modify, FIRST))
        assert await once_marked(marker) == [ORDER]
        read = await c.call_tool("retail__get_order_details", {"order_id": ORDER})
        assert '"status": "pending"' in text_of(read), text_of(read)  # the store does not say it was modified
        again = await c.call_tool("retail__modify_pending_order_items", SECOND)
        assert again.is_error and "Sentinel refused this call" in text_of(again), text_of(again)
        assert "only once" in text_of(again), text_of(again)
        await rt.audit.flush()
        outcomes = [r["outcome"] for r in await read_audit(rt.config.store_path)
                    if r["tool"] == "retail__modify_pending_order_items"]
    assert ran(marker) == [ORDER]  # never twice
    # the record still says the first one's outcome is unknown (timed out / cancelled), not that it was done
    assert ("timeout" if how == "gateway_timeout" else "cancelled") in outcomes, outcomes
    assert "ok" not in outcomes and outcomes[-1] == "denied", outcomes




async def test_a_modification_the_upstream_refused_did_not_happen(tmp_path: Path) -> None:
    """An answer, even an error, is an outcome: a modification the store refused changed nothing, so the
    next one is decided on the order as it is (still pending, never modified) and is forwarded."""
    marker = tmp_path / "marker"
    server = ["-m", "tests.retail.unanswered_writes", str(marker), "error"]
    user = AnsweringUser(YES)
    async with retail_runtime(tmp_path, server=server) as rt, conversation(rt, user) as c:
        first = await c.call_tool("retail__modify_pending_order_items", FIRST)
        assert first.is_error and text_of(first) == "payment declined", text_of(first)
        again = await c.call_tool("retail__modify_pending_order_items", SECOND)
        assert again.is_error and text_of(again) == "payment declined", text_of(again)  # forwarded
        await rt.audit.flush()
        outcomes = [r["outcome"] for r in await read_audit(rt.config.store_path)
                    if r["tool"] == "retail__modify_pending_order_items"]
    assert ran(marker) == []
    assert outcomes.count("tool_error") == 2 and "denied" not in outcomes, outcomes
