"""An upstream sends, during a call, progress notices under tokens that name no call of the gateway's: every
shape JSON can spell (a string, the call's id as a string, a float, a bool, null, a list, an object, a
100 KB string), ints near the call's own id, none at all; and under the call's own token, a progress that
is no number. Each must be charged to the upstream's notice budget and counted (``pushes_unrouted``: a
flood of them is paced like any other, notice_budget.py), and none may reach the caller, who asked for
progress; the call's answer still comes. Real upstream processes
(tests/gateway/hostile_stdio_upstream.py, hostile_http_upstream.py: attack ``odd_tokens``), down the lean
path and the SDK's, over stdio and streamable HTTP, in both eras.

Before, only ints in the lean calls' range were charged: a string, float, bool or null token cost the
gateway its parse and, where the SDK refused it, a warning with a traceback each, uncharged; a string
spelling a waiting SDK call's id was coerced to it and reached that call's client."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import pytest

from sentinel_mcp.gateway import notice_budget
from sentinel_mcp.gateway.upstream import Upstream
from tests.gateway import test_lean_stdio, test_lean_upstream
from tests.gateway.odd_progress import sent
from tests.gateway.test_lean_upstream import hostile as hostile  # the module's upstream (a fixture)

pytestmark = pytest.mark.timeout(240)
PATHS = pytest.mark.parametrize("lean", [True, False], ids=["lean", "sdk"])
ERAS = pytest.mark.parametrize("era", ["modern", "legacy"])
STDIO = [sys.executable, "-m", "tests.gateway.hostile_stdio_upstream"]


async def _odd_call(up: Upstream) -> tuple[Any, list[float], int, int]:
    """The call's result, the progress its caller was given, what was counted and charged meanwhile."""
    seen: list[float] = []

    async def progress(p: float, total: float | None, message: str | None) -> None:
        seen.append(p)

    unrouted, charged = up.pushes_unrouted, up.notice_budget.charged
    result = await up.call_tool("odd_tokens", {}, progress=progress)
    with anyio.move_on_after(30):  # a bound, no timing asserted: notices after the answer may be being read
        while up.pushes_unrouted - unrouted < sent(0):
            await anyio.sleep(0.05)
    await anyio.sleep(0.2)  # none more is counted (a notice counted twice would show here)
    return result, seen, up.pushes_unrouted - unrouted, up.notice_budget.charged - charged


def _check(got: tuple[Any, list[float], int, int]) -> None:
    result, seen, unrouted, charged = got
    assert not result.is_error and result.content[0].text == "hostile ok", result
    assert seen == []  # no progress naming no call of ours reached the caller
    assert unrouted == sent(0) and charged == sent(0), (unrouted, charged, sent(0))


@PATHS
@ERAS
def test_odd_tokens_over_stdio_are_charged_and_reach_no_one(lean: bool, era: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(notice_budget, "BURST", 100_000)  # counted, never paused: the count is the point
    _check(anyio.run(lambda: test_lean_stdio._with_upstream(STDIO, _odd_call, protocol=era, lean=lean)))


@PATHS
@ERAS
async def test_odd_tokens_over_streamable_http_are_charged_and_reach_no_one(
        hostile: str, lean: bool, era: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(notice_budget, "BURST", 100_000)
    _check(await test_lean_upstream._with_upstream(hostile, _odd_call, protocol=era, lean=lean))
