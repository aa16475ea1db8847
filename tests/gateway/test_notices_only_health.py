"""An upstream that, during a call, writes notices and never answers anything (neither the call nor the
health check's ping) is not silent, and not answering: it is cut once it has written on, read in full,
through ``PING_PATIENCE`` windows (``Upstream._pinged``), down every road the gateway reads an upstream by:
the lean HTTP call's event stream, the lean stdio tap and the SDK's transports alike.

Before, only the lean stdio path heard what it wrote: over HTTP (both paths) and over stdio down the SDK's
path it was cut at the first window as silent ("health check timed out"), a progress report every 50 ms
notwithstanding. A real upstream process over real HTTP and over stdio (tests/gateway/
hostile_http_upstream.py, hostile_stdio_upstream.py: attack ``notices_forever``, its pings never
answered)."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import pytest

from sentinel_mcp.gateway.upstream import Upstream
from tests.gateway import test_lean_stdio, test_lean_upstream
from tests.gateway.test_lean_upstream import hostile as hostile  # the module's upstream (a fixture)

pytestmark = pytest.mark.timeout(240)
HEALTH = 2.0  # seconds: a window (the least there is); patience is some six of them
PATHS = pytest.mark.parametrize("lean", [True, False], ids=["lean", "sdk"])
STDIO = [sys.executable, "-m", "tests.gateway.hostile_stdio_upstream"]


def watch_verdicts(up: Upstream) -> list[str]:
    """The health check's verdicts on ``up`` from now on (each ping that timed out, in order)."""
    verdicts: list[str] = []
    pinged = up._pinged

    async def watched(client: Any) -> None:
        try:
            await pinged(client)
        except TimeoutError as e:
            verdicts.append(str(e) or "silent for a whole window")
            raise

    up._pinged = watched  # type: ignore[method-assign]
    return verdicts


async def _verdicts(up: Upstream) -> list[str]:
    """What the health check concluded (``last_error`` is the call's end's, after it) while a call of
    ``notices_forever`` was in flight, until its first verdict."""
    verdicts = watch_verdicts(up)
    async with anyio.create_task_group() as tg:
        async def call() -> None:
            try:
                await up.call_tool("notices_forever", {})
            except Exception:  # noqa: BLE001 - the call ends with its connection, whichever way
                pass

        tg.start_soon(call)
        with anyio.fail_after(120):  # a bound, no timing asserted
            while not verdicts:
                await anyio.sleep(0.05)
        tg.cancel_scope.cancel()
    return verdicts


@PATHS
async def test_over_http_one_writing_notices_and_answering_nothing_is_cut_for_not_answering(
        hostile: str, lean: bool) -> None:
    verdicts = await test_lean_upstream._with_upstream(hostile, _verdicts, protocol="legacy", lean=lean,
                                                       health_interval=HEALTH, timeout=300)
    assert "while it kept writing" in verdicts[0], verdicts


@PATHS
def test_over_stdio_one_writing_notices_and_answering_nothing_is_cut_for_not_answering(lean: bool) -> None:
    verdicts = anyio.run(lambda: test_lean_stdio._with_upstream(
        STDIO, _verdicts, protocol="legacy", lean=lean, health_interval=HEALTH, timeout=300))
    assert "while it kept writing" in verdicts[0], verdicts
