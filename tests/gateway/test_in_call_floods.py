"""A streamable-HTTP upstream answering a call with an event stream of thousands of progress notices under the
call's own token before its answer, for a caller who asked for no progress: every one of them reaches no
client, so each is charged to the upstream's notice budget (gateway/notice_budget.py) and the call's stream
is read at the budget's pace (the upstream waits at its write), down the lean path and down the SDK's own
(``SENTINEL_LEAN_UPSTREAM=off``: its transport's read stream, gateway/paced_reading.py), in both eras. The
answer after the flood is never dropped. An upstream as chatty as a fair one is never paused.

Before, such a flood was neither charged nor paced: the gateway read and parsed it as fast as the upstream
wrote it (``pauses`` stayed 0), the event loop's time going to notices nobody would see. A real upstream
process (tests/gateway/hostile_http_upstream.py) over real HTTP on 127.0.0.1."""

from __future__ import annotations

import time
from typing import Any

import pytest

from sentinel_mcp.gateway import notice_budget
from sentinel_mcp.gateway.upstream import Upstream
from tests.gateway.hostile_http_upstream import FAIR, FLOOD
from tests.gateway.test_lean_upstream import _with_upstream
from tests.gateway.test_lean_upstream import hostile as hostile  # the module's upstream (a fixture)

pytestmark = pytest.mark.timeout(240)
PER_SECOND, BURST = 500.0, 100  # the SDK's own path reads ~1,500 a second here


@pytest.mark.parametrize("lean", [True, False])
@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_a_flood_of_progress_nobody_asked_for_is_read_at_the_budgets_pace(
        hostile: str, monkeypatch: pytest.MonkeyPatch, lean: bool, era: str) -> None:
    monkeypatch.setattr(notice_budget, "PER_SECOND", PER_SECOND)
    monkeypatch.setattr(notice_budget, "BURST", BURST)

    async def body(up: Upstream) -> Any:
        started = time.monotonic()
        r = await up.call_tool("sse_flood", {})
        return r, time.monotonic() - started, up.notice_budget.pauses

    result, elapsed, pauses = await _with_upstream(hostile, body, protocol=era, lean=lean)
    assert not result.is_error and result.content[0].text == "hostile ok", result  # its answer, after all
    assert pauses >= 1
    # every notice is charged as it is read, so the call cannot end sooner than the budget lets it be read
    assert elapsed >= 0.8 * (FLOOD - BURST) / PER_SECOND, elapsed


@pytest.mark.parametrize("lean", [True, False])
async def test_a_fair_upstreams_progress_is_never_paused(hostile: str, lean: bool) -> None:
    """The budget as shipped: a call's few hundred progress reports, to a caller who asked for none and to one
    who asked (each delivered, none charged), pause nothing."""
    seen: list[float] = []

    async def progress(p: float, total: float | None, message: str | None) -> None:
        seen.append(p)

    async def body(up: Upstream) -> Any:
        quiet = await up.call_tool("sse_flood_fair", {})
        told = await up.call_tool("sse_flood_fair", {}, progress=progress)
        return quiet, told, up.notice_budget.pauses

    quiet, told, pauses = await _with_upstream(hostile, body, lean=lean)
    assert not quiet.is_error and not told.is_error
    assert pauses == 0
    assert seen and seen[-1] == 99.0  # the newest report reached its caller (older ones may be replaced)
    assert len(seen) <= FAIR
