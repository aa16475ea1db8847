"""``Upstream.ready`` means listed: once a connection's tools are listed and its ``catalog_changed`` hook (the
gateway's catalog rebuilt, its clients told) has run, not before. 45 test files and the calls waiting for a
connection wait on it (``wait_ready``); set before the hook, whoever woke on it and then listed or called
through the gateway raced the rebuild (a hook that awaits anything lost it). On the first connection and on a
connection made again after the process died; a real stdio upstream (the toolbox)."""

from __future__ import annotations

import sys

import anyio
import pytest

from sentinel_mcp.config import StdioServer
from sentinel_mcp.gateway.upstream import Upstream, UpstreamHooks
from tests.gateway.helpers import TOOLBOX
from tests.gateway.test_lean_stdio import RECONNECT_SECONDS, ROOT

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize("lean", [True, False], ids=["lean", "sdk"])
def test_ready_is_set_once_the_catalog_hook_has_run(lean: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SENTINEL_LEAN_UPSTREAM", "on" if lean else "off")
    hooked: list[int] = []  # the connection (reconnects) each hook run finished for

    async def slow_hook(up: Upstream) -> None:
        for _ in range(50):  # a hook that awaits (a rebuild, clients told): every step is a turn for others
            await anyio.lowlevel.checkpoint()
        hooked.append(up.reconnects)

    async def body() -> None:
        target = StdioServer(command=sys.executable, args=[TOOLBOX], cwd=str(ROOT),  # type: ignore[arg-type]
                             timeout=60)
        up = Upstream("tb", target, UpstreamHooks(catalog_changed=slow_hook), health_interval=3600,
                      max_backoff=RECONNECT_SECONDS)
        async with anyio.create_task_group() as tg:
            tg.start_soon(up.run)
            try:
                assert await up.wait_ready(60), up.last_error
                assert hooked == [0]  # woken by ready: the hook has run for this connection
                assert "noop" in up.tools
                with pytest.raises(Exception):  # noqa: B017 - the process dies in the call, whichever way
                    await up.call_tool("die", {})
                with anyio.fail_after(60):  # a bound, no timing asserted
                    while up.reconnects == 0:
                        await anyio.sleep(0.02)
                assert await up.wait_ready(60), up.last_error
                assert hooked == [0, 1], hooked  # the connection made again: ready once its hook has run
            finally:
                await up.stop()

    anyio.run(body)

