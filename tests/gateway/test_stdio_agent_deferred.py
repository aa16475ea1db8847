"""Cold start over stdio (issue 21): the agent built-in is listed from its recorded description and built on
its first use (``builtin_description.STDIO_DEFERRABLE``); over HTTP it is built at start, because the
console's agent page follows its trace store from then on. A real `serve` of the embedded default in a
process of its own: its first tools/list lists the agent's tools with the agent's modules unimported; the
first call of an agent tool builds it and is answered (guarded and audited as any call)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.app.describe_builtins import default_without_upstreams
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway.audit import read_audit

pytestmark = pytest.mark.timeout(180)
ROOT = Path(__file__).resolve().parents[2]
AGENT = ("sentinel_mcp.agent.server", "sentinel_mcp.agent.settings")

# `serve` (stdio) in this process's main thread, its stdio the test's pipes; each time the test creates
# ``ask`` the thread writes the agent modules imported by then to ``out`` (and removes ``ask``)
DRIVER = textwrap.dedent("""
    import json, sys, threading, time
    from pathlib import Path
    from sentinel_mcp.cli import main

    ask, out = Path(sys.argv[1]), Path(sys.argv[2])

    def answer():
        while True:
            time.sleep(0.02)
            if ask.exists():
                out.write_text(json.dumps([m for m in %r if m in sys.modules]))
                ask.unlink()

    threading.Thread(target=answer, daemon=True).start()
    sys.exit(main(["serve"]))
""") % (AGENT,)


def _send(proc: subprocess.Popen[str], msg: dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(msg) + "\n")
    proc.stdin.flush()


def _answer(proc: subprocess.Popen[str], id_: int) -> dict[str, Any]:
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        assert line, "serve ended before answering"
        msg: dict[str, Any] = json.loads(line)
        if msg.get("id") == id_:
            return msg


def _agent_modules(ask: Path, out: Path) -> list[str]:
    out.unlink(missing_ok=True)
    ask.write_text("")
    deadline = time.monotonic() + 30
    while not out.exists() or ask.exists():
        assert time.monotonic() < deadline, "the driver never answered"
        time.sleep(0.02)
    modules: list[str] = json.loads(out.read_text())
    return modules


def test_stdio_lists_the_agent_unbuilt_and_builds_it_on_first_use(tmp_path: Path) -> None:
    ask, out, data = tmp_path / "ask", tmp_path / "out.json", tmp_path / "data"
    env = {**os.environ, "SENTINEL_DATA_DIR": str(data), "PYTHONPATH": str(ROOT)}
    env.pop("SENTINEL_CONFIG", None)
    proc = subprocess.Popen([sys.executable, "-c", DRIVER, str(ask), str(out)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT,
                            env=env)
    try:
        _send(proc, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}})
        _answer(proc, 0)
        _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _send(proc, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        names = {t["name"] for t in _answer(proc, 1)["result"]["tools"]}
        assert {"agent__agent_run", "agent__agent_runs", "agent__agent_trace"} <= names
        assert "airline__cancel_reservation" in names  # the upstream listed too: the whole catalog
        assert _agent_modules(ask, out) == []
        _send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                     "params": {"name": "agent__agent_runs", "arguments": {}}})
        result = _answer(proc, 2)["result"]
        assert not result.get("isError"), result
        assert sorted(_agent_modules(ask, out)) == sorted(AGENT)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    rows = [r for r in read_audit_sync(data) if r["tool"] == "agent__agent_runs"]
    assert [r["decision"] for r in rows] == ["allow"]  # through the guard and audited, as any call


def read_audit_sync(data: Path) -> list[dict[str, Any]]:
    import anyio

    async def read() -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        for db in sorted(data.rglob("sentinel.db")):
            rows += await read_audit(db, tail=200)
        return rows

    return anyio.run(read)


async def test_the_http_front_builds_the_agent_at_start(tmp_path: Path, data_dir: Path) -> None:
    """The HTTP front's default (``running_gateway``'s): the agent built before the first call, its trace
    store shared for the console from the start."""
    async with running_gateway(default_without_upstreams()) as rt:
        agent = rt.manager.upstreams["agent"]
        assert agent.loaded and agent.target.server is not None
        assert rt.services.agent_traces is not None
