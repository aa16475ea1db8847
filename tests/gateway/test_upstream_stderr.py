"""A stdio upstream's stderr reaches Sentinel's stderr bounded, its escapes made visible and each line named
by its server (gateway/upstream_stderr.py): before, the upstream wrote straight into Sentinel's own stderr,
so a 5 MB line (with escapes that retitle and clear the terminal) or 100,000 lines reached the log whole.
The upstreams keep serving: their pipes are drained.

Real gateway (``serve`` over stdio, whose upstreams are launched early; and in-process, where the SDK spawns
them), the upstreams real servers in subprocesses, raw JSON-RPC."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway import upstream_stderr
from sentinel_mcp.gateway.upstream_stderr import LINES_PER_WINDOW, MAX_LINE_CHARS, StderrRelay

from .helpers import make_config

pytestmark = pytest.mark.timeout(120)
ROOT = Path(__file__).resolve().parents[2]
BOUND = 2 * (LINES_PER_WINDOW + 5) * (MAX_LINE_CHARS + 200)  # both servers' shown lines, with room to spare


def _servers() -> dict[str, Any]:
    def server(**env: str) -> dict[str, Any]:
        return {"command": sys.executable, "args": ["-m", "tests.gateway.decorated_upstream"],
                "env": {"PYTHONPATH": str(ROOT), **env}}
    return {"fl": server(STDERR="flood", STDERR_BYTES="5000000"),
            "ln": server(STDERR="lines", STDERR_LINES="100000")}


def _check(logged: bytes) -> None:
    assert len(logged) < BOUND, len(logged)
    assert b"\x1b" not in logged and b"\x07" not in logged
    text = logged.decode()
    assert "[upstream fl] \u27e8U+001B\u27e9]0;owned" in text  # the escape shown, not run
    assert "[upstream ln] line 0" in text and "more stderr lines not shown" in text


def test_a_served_gateways_upstream_stderr_is_bounded(tmp_path: Path) -> None:
    cfg = tmp_path / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": _servers(),
                               "sentinel": {"data_dir": str(tmp_path / "state"), "builtins": []}}))
    err = tmp_path / "stderr"
    with err.open("wb") as sink:
        proc = subprocess.Popen([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve"], cwd=ROOT,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=sink)
        lines = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                     "protocolVersion": "2025-11-25", "capabilities": {},
                     "clientInfo": {"name": "t", "version": "1"}}},
                 {"jsonrpc": "2.0", "method": "notifications/initialized"},
                 {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "fl__plain"}},
                 {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ln__plain"}}]
        assert proc.stdin is not None and proc.stdout is not None
        for message in lines:
            proc.stdin.write(json.dumps(message).encode() + b"\n")
            proc.stdin.flush()
        answers: dict[Any, Any] = {}
        while not {1, 2} <= set(answers):
            line = proc.stdout.readline()
            assert line, "the gateway ended"
            answer = json.loads(line)
            answers[answer.get("id")] = answer
        proc.stdin.close()
        proc.wait(60)
    for rid in (1, 2):  # each upstream served after its flood: its pipe was drained
        assert answers[rid]["result"]["content"][0]["text"] == "plain words", answers[rid]
    _check(err.read_bytes())


async def test_an_sdk_spawned_upstreams_stderr_is_bounded(data_dir: Path, capfd: Any) -> None:
    async with running_gateway(make_config(data_dir, _servers(), builtins=[])) as rt:
        async with Client(rt.front.server, mode="legacy") as c:
            for name in ("fl__plain", "ln__plain"):
                assert (await c.call_tool(name, {})).content[0].text == "plain words"
    _check(capfd.readouterr().err.encode())


def _relayed(data: bytes, capsys: Any) -> str:
    read_fd, write_fd = os.pipe()
    relay = StderrRelay("up\x1b[2J", read_fd)
    writer = threading.Thread(target=lambda: (os.write(write_fd, data), os.close(write_fd)))
    writer.start()
    relay.run()
    writer.join()
    return capsys.readouterr().err


def test_a_line_without_end_is_shown_once_cut(capsys: Any) -> None:
    err = _relayed(b"\x9b\xff" + b"y" * 3_000_000 + b"\nnext\n", capsys)
    assert err.count("[upstream up\u27e8U+001B\u27e9[2J] ") == 2 and "next" in err
    assert len(err) < 3 * MAX_LINE_CHARS


def test_past_the_total_bound_nothing_more_is_shown(capsys: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(upstream_stderr, "MAX_SHOWN_BYTES", 2_000)
    err = _relayed(b"".join(b"line %d\n" % i for i in range(90)), capsys)
    assert len(err) < 2_100 and err.rstrip().endswith("no more is") and "line 89" not in err
