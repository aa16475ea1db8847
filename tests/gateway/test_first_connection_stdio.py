"""``sentinel-mcp serve`` over stdio (its lean path, as Claude Desktop starts it): a call written while an
upstream still makes its first connection (past the start-up wait) waits for it and is answered by it, not
told "unknown tool". A real process, a real stdio upstream held at its gate (gated_toolbox.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(180)
GATED = str(Path(__file__).with_name("gated_toolbox.py"))


def test_a_call_written_before_the_upstream_connected_is_answered_by_it(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    cfg = tmp_path / "sentinel.json"
    # connect_timeout past the start-up wait (15 s): the gateway serves while tb still connects
    tb = {"command": sys.executable, "args": [GATED], "env": {"GATE": str(gate)}, "connect_timeout": 120}
    cfg.write_text(json.dumps({"mcpServers": {"tb": tb},
                               "sentinel": {"data_dir": str(tmp_path / "state"), "builtins": []}}))
    proc = subprocess.Popen([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, env={**os.environ}, cwd=tmp_path)
    assert proc.stdin is not None and proc.stdout is not None
    messages = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "early", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "tb__echo",
                                                                       "arguments": {"text": "waited"}}},
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
    ]
    answers: dict[int, dict] = {}
    try:
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        proc.stdin.flush()
        for _ in range(200):  # bounded: notifications (list_changed) come too
            line = proc.stdout.readline()
            if not line:
                break
            msg = json.loads(line)
            if msg.get("id") in (1, 2):
                answers[msg["id"]] = msg
            if 2 in answers and not gate.exists():
                # the call was read (and routed) before the ping: the gate opens only now
                assert 1 not in answers, answers[1]
                gate.touch()
            if 1 in answers:
                break
    finally:
        proc.stdin.close()
        proc.wait(60)
    result = answers[1]["result"]
    assert not result.get("isError"), result
    assert result["content"][0]["text"] == "waited"
