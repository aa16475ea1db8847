"""An HTTP upstream that loses or changes its session under a call: the call in flight is answered (never
left to hang until its time limit), the loss is reported, and the upstream is reconnected with a new session.

A real upstream over streamable HTTP on 127.0.0.1 (``toolbox_server.py``), restarted on its port while a call
waits in it; the real ``Upstream`` on the lean path and the SDK's, both eras."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from sentinel_mcp.gateway.upstream import Upstream, UpstreamCallError
from tests.conftest import free_port, stop_process
from tests.gateway.helpers import TOOLBOX
from tests.gateway.test_lean_upstream import _plain, _serve, _with_upstream
from tests.gateway.test_principal_isolation import _served

pytestmark = pytest.mark.timeout(240)
CALL_SECONDS = 600.0  # the call's own limit: far past the test's, so an answer is never that limit's
STOP_GRACE = 2.0  # seconds the stopped upstream has to end by itself before it is killed
HANG_GUARD = 120  # a call still waiting this long has hung: the test fails instead of waiting out its limit


@pytest.mark.parametrize("lean", [True, False])
@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_call_in_flight_when_its_upstream_restarts_is_answered(tmp_path: Path, lean: bool, era: str
                                                                 ) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    proc = _serve([sys.executable, TOOLBOX, "--http", str(port)], port)
    marker = tmp_path / "marker"

    async def body(up: Upstream) -> Any:
        nonlocal proc
        failed: list[BaseException] = []

        async def call() -> None:
            try:
                await up.call_tool("hang_marked", {"path": str(marker)}, timeout=CALL_SECONDS)
            except UpstreamCallError as e:
                failed.append(e)

        with anyio.fail_after(HANG_GUARD):
            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                while not marker.exists() or "started" not in marker.read_text():
                    await anyio.sleep(0.02)
                # uvicorn's stop waits for open connections, and a modern-era call holds one: that server
                # never ended by itself and was killed after stop_process's 15 s default: the same, sooner
                stop_process(proc, timeout=STOP_GRACE)
                proc = _serve([sys.executable, TOOLBOX, "--http", str(port)], port)
        assert failed and not failed[0].timeout, failed  # type: ignore[attr-defined]
        with anyio.fail_after(HANG_GUARD):
            while True:
                await up.wait_ready(30)
                try:
                    return str(failed[0]), _plain(await up.call_tool("noop", {}))
                except UpstreamCallError:
                    await anyio.sleep(0.2)  # the old connection still: its reconnect is under way

    try:
        said, result = anyio.run(lambda: _with_upstream(url, body, protocol=era, lean=lean,
                                                        timeout=CALL_SECONDS))
    finally:
        stop_process(proc)
    assert "went away" in said, said
    assert result["content"][0]["text"] == "ok"


@pytest.mark.parametrize("lean", [True, False])
def test_an_upstream_answering_under_another_session_is_reconnected(lean: bool) -> None:
    """A handshake-era upstream answers under another ``Mcp-Session-Id`` than the one it gave: no answer is
    taken from it since (whose session's state it holds is unknown), the call is told the upstream went
    away, and the new connection's session starts empty (the old one's login is not carried over)."""

    async def body(up: Upstream) -> Any:
        logged = _plain(await up.call_tool("login", {"name": "alice"}))
        assert logged["content"][0]["text"] == "logged in as alice"
        first = up._session.session_id if up._session is not None else None
        said = []
        try:
            said.append(_plain(await up.call_tool("switch", {}))["content"][0]["text"])
        except UpstreamCallError as e:
            said.append(str(e))
        for _ in range(200):  # bounded by count: the reconnect under way
            await up.wait_ready(30)
            try:
                who = _plain(await up.call_tool("whoami", {}))["content"][0]["text"]
                break
            except UpstreamCallError as e:
                said.append(str(e))
                await anyio.sleep(0.05)
        again = up._session.session_id if up._session is not None else None
        return said, who, first, again

    with _served("--http") as url:
        said, who, first, again = anyio.run(lambda: _with_upstream(url, body, protocol="legacy", lean=lean))
    assert any("went away" in s for s in said), said
    assert who == "nobody", (who, said)
    assert first is not None and again not in (None, first, f"other-{first}"), (first, again)
