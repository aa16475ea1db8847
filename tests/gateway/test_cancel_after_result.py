"""A write whose result came back has happened: what it teaches the policy is learned even when its caller
cancels the call right then.

The observe step learns from a result (a write's effects, its confirmation spent) while the outcome row is
committed, and a cancellation of the call (the client's ``notifications/cancelled``, its connection gone)
cancelled that learning too: the upstream had written, and the guard never knew. A rule such as airline.pl's
one certificate per reservation (``establish(compensated(R))``) or "a file is written once" then let the same
write through again in the next call. Real gateway, real policy engine, real stdio upstream; the guard's
observe is held at its start only so the cancellation lands at a known point.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import anyio
import pytest

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.call_request import CallRequest
from sentinel_mcp.core.port import Refused
from sentinel_mcp.paths import RULEBASES_DIR

from .helpers import make_config, toolbox_stdio

pytestmark = pytest.mark.timeout(120)

RULES = """
fact(written/1).
guard('tb__write_marker', [path = P, text = _],
      require(\\+ written(P), 'this file was written once in this conversation already')).
effect('tb__write_marker', [path = P], [establish(written(P))]).
"""


def config(data_dir: Path) -> Any:
    data_dir.mkdir(parents=True, exist_ok=True)
    rules = data_dir / "once.pl"
    rules.write_text(RULES)
    return make_config(data_dir, servers={"tb": toolbox_stdio(fork=True)},
                       rulebases=[str(RULEBASES_DIR / "default.pl"), str(rules)])


@pytest.mark.parametrize("held_at", ["observe", "result_check"])
async def test_a_write_cancelled_once_its_result_came_still_teaches_its_effect(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, held_at: str
) -> None:
    """Cancelled while the guard learns from the result, or while the result is checked against the tool's
    output schema (before the guard is told of it)."""
    marker = data_dir / "marker.txt"
    async with running_gateway(config(data_dir)) as rt:
        entered, release = asyncio.Event(), asyncio.Event()
        if held_at == "observe":
            guard = rt.gateway.guard
            observe = guard.observe

            async def held_observe(call: Any, result: Any) -> None:
                if call.name == "tb__write_marker":
                    entered.set()
                    await release.wait()
                await observe(call, result)

            monkeypatch.setattr(guard, "observe", held_observe)
        else:
            results = rt.gateway.results
            problem = results.problem

            async def held_problem(tool: Any, result: Any) -> Any:
                entered.set()
                await release.wait()
                return await problem(tool, result)

            monkeypatch.setattr(results, "problem", held_problem)

        def write(text: str) -> CallRequest:
            return CallRequest(name="tb__write_marker", arguments={"path": str(marker), "text": text},
                               session_id="s1")

        # cancelled as the SDK cancels a request its client gave up (its responder's anyio cancel scope)
        scope = anyio.CancelScope()
        outcome: list[Any] = []

        async def call_then_cancelled() -> None:
            with scope:
                outcome.append(await rt.gateway.run(write("one")))

        task = asyncio.ensure_future(call_then_cancelled())
        await asyncio.wait_for(entered.wait(), 30)  # the upstream wrote; Sentinel is handling its result
        scope.cancel()
        release.set()
        await asyncio.wait_for(task, 30)
        assert scope.cancelled_caught and not outcome  # the call was cancelled: no answer left
        assert marker.read_text() == "one\n"
        again = await rt.gateway.run(write("two"))
        assert isinstance(again, Refused) and "written once" in again.reason, again
        assert marker.read_text() == "one\n"
