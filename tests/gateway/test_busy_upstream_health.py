"""An upstream busy writing (a flood's backlog on a loaded machine) answers the gateway's health ping only
behind what it writes: the ping's answer is late, the connection alive. Its connection was cut ("health
check timed out") and every call on it failed ("went away during the call"); it is cut only when the
upstream says nothing at all for a whole health window. A real stdio upstream process
(``hostile_stdio_upstream.py``, ``busy_writer``: its stdout held 15 s while it pushes a request each 0.15 s),
down the lean path and the SDK's.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal

import anyio
import pytest
from mcp.types import ElicitRequestParams, ElicitResult, ErrorData

from sentinel_mcp.core.caller_link import CallerLink
from sentinel_mcp.gateway.upstream import Upstream
from tests.gateway.helpers import descendants
from tests.gateway.hostile_stdio_upstream import BUSY
from tests.gateway.test_lean_stdio import HOSTILE, _with_upstream

pytestmark = pytest.mark.timeout(240)
HEALTH = 5.0  # seconds between pings, and a ping's window (its stdout is held 15 s, a push each 0.15 s)


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


class Accepting(CallerLink):
    who = "the test's caller"

    async def elicit(self, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        return ElicitResult(action="accept", content={"word": "w"})


@pytest.mark.parametrize("lean", [True, False])
def test_a_ping_answered_late_behind_a_busy_upstreams_writes_keeps_the_connection(lean: bool) -> None:
    async def body(up: Upstream) -> None:
        client = up.client
        r = await up.call_tool("busy_writer", {}, link=Accepting())
        assert not r.is_error, r
        got = json.loads(r.content[0].text)
        assert sum(got.values()) == BUSY, got  # every push answered
        assert up.client is client and up.reconnects == 0, up.last_error  # the same connection throughout
        assert (await up.call_tool("noop", {})).content[0].text == "ok"

    anyio.run(lambda: _with_upstream(HOSTILE, body, protocol="legacy", lean=lean, health_interval=HEALTH))


def test_an_upstream_silent_for_a_whole_window_is_still_cut() -> None:
    """The other side of it: a process stopped (SIGSTOP: it writes nothing, answers nothing) is found dead by
    the health check and reconnected."""

    async def body(up: Upstream) -> None:
        # the upstream itself (not the reaper that watches it, whose command line ends with its command)
        (pid,) = [p for p in descendants(os.getpid()) if _cmdline(p) == "\0".join([*HOSTILE, ""]).encode()]
        os.kill(pid, signal.SIGSTOP)
        try:
            with anyio.fail_after(120):
                while up.reconnects == 0:
                    await anyio.sleep(0.1)
        finally:
            with contextlib.suppress(ProcessLookupError):  # killed with its group when it was cut
                os.kill(pid, signal.SIGCONT)
        assert await up.wait_ready(60), up.last_error
        assert (await up.call_tool("noop", {})).content[0].text == "ok"

    anyio.run(lambda: _with_upstream(HOSTILE, body, protocol="legacy", health_interval=HEALTH))
