"""A session's mirror reloaded between a decision's fetch and its next pass loses nothing the fetch taught.

The mirror of a conversation is dropped and loaded again from the store when another conversation pushes it
out (``max_sessions``), when the operator clears a kept fact (``follow_clears``) and when a replica changed it
(``_follow``): each at any moment, also while a decision waits for its look-ups. A decision that fetched
what its guard needs then proved its next pass on a mirror that no longer held it ("... did not tell (not
fetched)"): a call that should have been asked was denied (tests/retail under load: 3-8 of 184).
The reload is forced here by a hook on the look-up itself, after the upstream answered: no sleeps.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Awaitable, Callable

import pytest
from tests.policy.policy_rig import rig

from sentinel_mcp.core.decision import Ask, Deny
from sentinel_mcp.policy.fact_store import Fact
from sentinel_mcp.policy.kept_clears import clear
from sentinel_mcp.policy.kept_effects import KEPT_SCOPE

pytestmark = pytest.mark.timeout(60)

CALL = ("bk__cancel_booking", {"booking_id": "BK-789"})


def _hooked(port: Any, after_fetch: Callable[[str], Awaitable[None]]) -> list[str]:
    """Run ``after_fetch(tool)`` as the upstream answers a call (before anything learns from its result)."""
    plain = port.client.call_tool
    seen: list[str] = []

    async def call_tool(name: str, arguments: dict[str, Any], *a: Any, **kw: Any) -> Any:
        out = await plain(name, arguments, *a, **kw)
        seen.append(name)
        await after_fetch(name)
        return out

    port.client.call_tool = call_tool
    return seen


async def test_a_clear_between_the_fetch_and_the_next_pass(tmp_path: Path) -> None:
    async with rig(tmp_path / "facts.db") as r:
        k = r.guard.knowledge
        text = "certificate_sent(fl_1)"
        await r.guard.store.add([Fact(session=KEPT_SCOPE, predicate="certificate_sent", args=["fl_1"],
                                      fact=text, provenance="observed")])
        await k.follow_clears()  # the baseline

        async def cleared(tool: str) -> None:  # the operator's clear, seen by the store's upkeep
            if tool == "get_booking":
                assert await clear(r.guard.store, text, by="operator") is not None
                await k.follow_clears()
                assert not k.is_loaded("s1")

        seen = _hooked(r.port, cleared)
        d = await r.guard.decide(r.port.call_of(*CALL))
        assert "get_booking" in seen
        assert isinstance(d, Ask), d  # the status fetched stands: the user's yes is what is missing


async def test_an_eviction_between_the_fetch_and_the_next_pass(tmp_path: Path) -> None:
    async with rig(tmp_path / "facts.db") as r:
        k = r.guard.knowledge
        k.max_sessions = 1

        async def other(tool: str) -> None:  # another conversation is loaded: "s1" is pushed out
            if tool == "get_booking":
                await k.ensure("other", r.guard.rulebases.active)
                assert not k.is_loaded("s1")

        seen = _hooked(r.port, other)
        d = await r.guard.decide(r.port.call_of(*CALL))
        assert "get_booking" in seen
        assert isinstance(d, Ask), d


async def test_a_reload_never_allows_more(tmp_path: Path) -> None:
    """A fact the store no longer holds is not in the reloaded mirror: the decision stands on the store."""
    async with rig(tmp_path / "facts.db") as r:
        k = r.guard.knowledge
        k.max_sessions = 1
        r.state["bookings"]["BK-789"]["status"] = "pending"

        async def other(tool: str) -> None:
            if tool == "get_booking":
                await k.ensure("other", r.guard.rulebases.active)

        _hooked(r.port, other)
        d = await r.guard.decide(r.port.call_of(*CALL))
        assert isinstance(d, Deny) and "only confirmed bookings can be cancelled" in d.unmet, d
