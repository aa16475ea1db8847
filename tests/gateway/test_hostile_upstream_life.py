"""An stdio upstream hostile at the transport, beside a well-behaved one: it never answers initialize, or
answers it under another id; it closes its stdout and keeps running; it dies leaving a child that keeps its
pipes open (in its process group, or escaped to a session of its own). Each is bounded (the connect timeout,
the connection's end), reported (``last_error``), reconnected with back-off (a new process each time, the
old one ended); the other upstream serves throughout; once the gateway stops, no process of it is left.
Real gateway, real subprocesses (``hostile_life_upstream.py``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.call_request import CallRequest
from sentinel_mcp.identity.principal import Principal
from tests.gateway.helpers import alive, make_config, toolbox_stdio
from tests.gateway.hostile_handshake_http import MODES
from tests.gateway.test_principal_isolation import _connections_to

from ..conftest import free_port, stop_process, wait_http

pytestmark = pytest.mark.timeout(120)
HOSTILE = str(Path(__file__).with_name("hostile_life_upstream.py"))
SERVER = str(Path(__file__).with_name("hostile_handshake_http.py"))
ALICE = Principal("alice", "token")


async def _call(gw: Any, tool: str, **arguments: Any) -> tuple[bool, str]:
    out = await gw.run(CallRequest(tool, arguments, "alice/s", "test", "client", principal=ALICE))
    out = getattr(out, "result", None) or out
    content = getattr(out, "content", None)
    text = content[0].text if content else str(getattr(out, "reason", out))
    return bool(getattr(out, "is_error", False) or content is None), text


async def _until(check: Any, seconds: float = 60.0) -> None:
    with anyio.fail_after(seconds):  # a bound, no timing asserted
        while not await check():
            await anyio.sleep(0.05)


def _pids(path: Path) -> set[int]:
    return {int(p) for p in path.read_text().split()} if path.exists() else set()


def _servers(mode: str, pids: Path, *extra: str) -> dict[str, Any]:
    return {"ok": toolbox_stdio(),
            "bad": {"command": sys.executable, "args": [HOSTILE, mode, str(pids), *extra],
                    "protocol": "legacy", "connect_timeout": 1, "timeout": 30}}


@pytest.mark.parametrize("mode,said", [("silent", "no answer within"), ("other_id", "no answer within")])
async def test_an_upstream_that_never_completes_the_handshake(data_dir: Path, mode: str, said: str) -> None:
    pids = data_dir / "pids"
    async with running_gateway(make_config(data_dir, _servers(mode, pids))) as rt:
        bad = rt.manager.upstreams["bad"]

        async def retried() -> bool:
            return bad.reconnects >= 2 and len(_pids(pids)) >= 3

        await _until(retried)
        assert bad.state != "ready" and said in str(bad.last_error), bad.last_error
        assert await _call(rt.gateway, "ok__echo", text="hi") == (False, "hi")
        assert len([p for p in _pids(pids) if alive(p)]) <= 1  # each attempt's process ended before the next
    assert not [p for p in _pids(pids) if alive(p)]


@pytest.mark.parametrize("mode,extra", [("close_stdout", ()), ("fork_keep", ()),
                                        ("fork_keep", ("--escape",))])
async def test_an_upstream_whose_wire_ends_but_not_its_processes(data_dir: Path, mode: str,
                                                                 extra: tuple[str, ...]) -> None:
    pids = data_dir / "pids"
    async with running_gateway(make_config(data_dir, _servers(mode, pids, *extra))) as rt:
        bad = rt.manager.upstreams["bad"]
        assert bad.state == "ready", bad.last_error
        first = _pids(pids)
        failed, text = await _call(rt.gateway, "bad__go")
        assert failed, text

        async def back() -> bool:
            return bad.reconnects >= 1 and bad.state == "ready"

        await _until(back)
        assert await _call(rt.gateway, "ok__echo", text="hi") == (False, "hi")
        assert not [p for p in first if alive(p)], first  # the old processes ended, children too

    assert not [p for p in _pids(pids) if alive(p)]


async def test_an_upstream_flooding_notices_unasked(data_dir: Path) -> None:
    """10,000 notifications at once, outside any call (list changes, log lines, updates of resources no one
    subscribed to, progress for no call): counted and dropped or coalesced, the listing refreshed at a pace
    (not once a notice), the connection kept; the upstream and its neighbour answer on."""
    pids = data_dir / "pids"
    async with running_gateway(make_config(data_dir, _servers("flood", pids))) as rt:
        bad = rt.manager.upstreams["bad"]
        assert await _call(rt.gateway, "bad__go") == (False, "flooding")

        async def taken() -> bool:  # every update read (the last kind but one of each four)
            return bad.updates_unsubscribed >= 2_500

        await _until(taken)
        assert await _call(rt.gateway, "ok__echo", text="hi") == (False, "hi")
        assert await _call(rt.gateway, "bad__go") == (False, "flooding")
        assert bad.reconnects == 0 and bad.state == "ready"
        lists = len((data_dir / "pids.lists").read_text().split())
        assert lists < 100, lists  # 2,500 list changes asked; paced refreshes, far fewer


async def test_http_upstreams_hostile_at_the_handshake(data_dir: Path) -> None:
    """Over streamable HTTP, initialize never answered, answered by an endless stream of comments, under
    another id, cut mid-event, as one event of many small lines past every bound, or by a flood of
    notifications and never the answer: each upstream bounded by its connect timeout, reported, retried
    with back-off, and no attempt's connection left open; the well-behaved neighbour serves throughout."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, SERVER, str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_http(f"http://127.0.0.1:{port}/", proc=proc)
        servers: dict[str, Any] = {"ok": toolbox_stdio()}
        said = {"mid_event": "ended without a response", "small_events": "1048576 byte limit"}
        for mode in MODES:  # those that end by themselves are given time to (the machine may be slow)
            servers[mode] = {"url": f"http://127.0.0.1:{port}/{mode}", "protocol": "legacy",
                             "connect_timeout": 30 if mode in said else 1, "timeout": 5}
        async with running_gateway(make_config(data_dir, servers)) as rt:
            ups = [rt.manager.upstreams[m] for m in MODES]

            async def retried() -> bool:
                return all(up.reconnects >= 2 for up in ups)

            await _until(retried)
            for up in ups:
                assert up.state != "ready", up.name
                why = str(up.last_error)
                assert said.get(up.name, "no answer within 1s") in why, (up.name, why)
            assert await _call(rt.gateway, "ok__echo", text="hi") == (False, "hi")
            assert _connections_to(port) <= len(MODES)  # at most the attempt under way, each
        assert _connections_to(port) == 0
    finally:
        stop_process(proc)
