"""Cold start (issue 21): the stdio ``serve`` launches its stdio upstreams before it imports the MCP SDK, and
the SDK adopts those processes, only on an exact match and only once; what it does not adopt is killed. A
call sent the moment the gateway is spawned is still decided by the loaded rulebase, never let through."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client import stdio as sdk_stdio

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.app.early_start import launch_stdio_upstreams
from sentinel_mcp.gateway import early_spawn

from tests.conftest import free_port
from .helpers import make_config, toolbox_stdio

pytestmark = pytest.mark.timeout(120)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z")


async def test_the_sdk_adopts_the_launched_upstream_and_talks_to_it(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = make_config(data_dir, builtins=["sentinel"])
    # in `serve` the SDK is imported after the launch and binds that same sys.stderr as its default
    # errlog; under pytest, output capture swaps sys.stderr, so both sides get the process's own stderr
    monkeypatch.setattr(sys, "stderr", sys.__stderr__)
    monkeypatch.setattr(sdk_stdio.stdio_client.__wrapped__, "__defaults__", (sys.__stderr__,))
    await launch_stdio_upstreams(cfg)
    launched = early_spawn.launched_pids()
    assert len(launched) == 1
    async with running_gateway(cfg) as rt:
        assert early_spawn.pending() == 0
        assert rt.manager.upstreams["tb"].state == "ready"
        assert _alive(launched[0]), "the adopted process must be the one serving, not killed"
        async with Client(rt.front.server) as c:
            assert (await c.call_tool("tb__echo", {"text": "adopted"})).content[0].text == "adopted"
    assert not _alive(launched[0])  # stopped with the gateway, as any upstream


@pytest.mark.parametrize("change", ["env", "args", "cwd"])
async def test_a_launch_that_does_not_match_is_killed_and_not_used(data_dir: Path, tmp_path: Path,
                                                                    change: str) -> None:
    cfg = make_config(data_dir, builtins=["sentinel"])
    spec = toolbox_stdio()
    env, args, cwd = None, list(spec["args"]), None
    if change == "env":
        env = {"SENTINEL_EARLY_SPAWN_TEST": "1"}
    elif change == "args":
        args.append("--extra")
    else:
        cwd = str(tmp_path)
    assert await early_spawn.launch(spec["command"], args, env, cwd)
    stray = early_spawn.launched_pids()
    assert len(stray) == 1
    with anyio.fail_after(60):
        async with running_gateway(cfg) as rt:
            assert early_spawn.pending() == 0
            assert not _alive(stray[0]), "a launch the SDK did not ask for is killed at the end of start-up"
            assert rt.manager.upstreams["tb"].state == "ready"  # spawned by the SDK as always
            async with Client(rt.front.server) as c:
                assert (await c.call_tool("tb__echo", {"text": "fresh"})).content[0].text == "fresh"


async def test_adopt_only_on_exact_match_once_and_discard_kills(data_dir: Path) -> None:
    spec = toolbox_stdio()
    assert await early_spawn.launch(spec["command"], spec["args"], None, None)
    env = early_spawn.sdk_environment(None)
    assert early_spawn.adopt(spec["command"], spec["args"], {**env, "X": "1"}, sys.stderr, None) is None
    assert early_spawn.adopt(spec["command"], spec["args"], env, object(), None) is None  # another stderr
    assert early_spawn.adopt(spec["command"], spec["args"], env, sys.stderr, "/") is None
    process = early_spawn.adopt(spec["command"], spec["args"], env, sys.stderr, None)
    assert process is not None and early_spawn.pending() == 0
    assert early_spawn.adopt(spec["command"], spec["args"], env, sys.stderr, None) is None  # once only
    await process.aclose()
    # a launch nobody asks for (start-up failed first) is killed and reaped by discard
    assert await early_spawn.launch(spec["command"], spec["args"], None, None)
    pid = early_spawn.launched_pids()[0]
    await early_spawn.discard()
    assert early_spawn.pending() == 0 and not _alive(pid)
    assert not await early_spawn.launch("/nonexistent/sentinel-early", [], None, None)  # the SDK reports it


def test_a_call_at_spawn_time_waits_for_the_rulebase_and_the_launch_is_adopted(tmp_path: Path) -> None:
    """The request is written before the gateway has imported anything: it is read only once the gateway is
    assembled, and the airline rulebase (not a bare default) decides it: it asks why, nothing is cancelled."""
    env = {**os.environ, "SENTINEL_DATA_DIR": str(tmp_path / "state")}
    proc = subprocess.Popen([sys.executable, "-m", "sentinel_mcp", "-v", "serve"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    call = {"name": "airline__cancel_reservation", "arguments": {"reservation_id": "NO6JO3"}}
    messages = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "early", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "airline__get_reservation_details", "arguments": {"reservation_id": "NO6JO3"}}},
    ]
    try:
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        proc.stdin.flush()
        answers: dict[int, dict] = {}
        for _ in range(50):  # bounded: notifications may come first
            line = proc.stdout.readline()
            if not line:
                break
            msg = json.loads(line)
            if msg.get("id") in (1, 2):
                answers[msg["id"]] = msg
            if len(answers) == 2:
                break
    finally:
        proc.stdin.close()
        proc.wait(60)
    meta = answers[1]["result"]["_meta"]
    assert meta["sentinel/decision"] == "ask" and meta["sentinel/blocked"] is True
    assert "Why do you want to cancel reservation NO6JO3" in meta["sentinel/reason"]  # the airline rulebase's
    details = answers[2]["result"]
    assert not details.get("isError"), details
    assert '"status": "cancelled"' not in json.dumps(details)  # the blocked cancel never reached the airline
    log = proc.stderr.read()
    assert "adopted (launched before the SDK loaded)" in log
    assert "discarded" not in log


def test_serve_over_http_launches_its_upstream_early_and_serves_through_it(tmp_path: Path) -> None:
    """`serve --http` takes the same early start (app/early_start.py): the airline upstream launched before
    the SDK loaded is the one adopted and used (never discarded and spawned again), uvicorn runs in the loop
    that launched it, and SIGINT stops the gateway (exit 130, as before) with every upstream process gone."""
    import signal
    import time
    import urllib.request

    from .helpers import descendants

    port = free_port()
    state = tmp_path / "state"
    env = {**os.environ, "SENTINEL_DATA_DIR": str(state)}
    command = [sys.executable, "-m", "sentinel_mcp", "-v", "serve", "--http", f"127.0.0.1:{port}"]
    # SIGINT heard as from a terminal, even where this test runs with it ignored (a background job)
    proc = subprocess.Popen(command,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stderr is not None
    try:
        for _ in range(600):  # bounded by count: up to a minute on a loaded machine
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2):
                    break
            except OSError:
                time.sleep(0.1)
        token = (state / "http-token").read_text().strip()
        body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": "airline__get_reservation_details", "arguments": {"reservation_id": "NO6JO3"},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientInfo": {"name": "early-http", "version": "1"},
                      "io.modelcontextprotocol/clientCapabilities": {}}}}
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/mcp", data=json.dumps(body).encode(), method="POST",
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                     "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28",
                     "Mcp-Method": "tools/call", "Mcp-Name": "airline__get_reservation_details"})
        with urllib.request.urlopen(request, timeout=60) as answer:
            result = json.loads(answer.read())["result"]
        assert not result.get("isError"), result
        assert "NO6JO3" in json.dumps(result)  # the airline upstream answered
        children = descendants(proc.pid)
        assert children, "the airline upstream runs under the gateway"
    finally:
        proc.send_signal(signal.SIGINT)
        rc = proc.wait(60)
    log = proc.stderr.read()
    assert rc == 130, log  # as before: uvicorn re-raises SIGINT once it has drained and stopped
    assert "Traceback" not in log
    assert "adopted (launched before the SDK loaded)" in log
    assert "discarded" not in log
    time.sleep(0.5)
    assert not [pid for pid in children if _alive(pid)], "every upstream process ended with the gateway"
