"""The stdio call's cut path answers and records what the full path does (issue 21, perf-kernel's and
perf-stdio4's cuts): the same calls (plain and odd: unicode, a NUL, a long text, a lone surrogate escape,
structured content, a tool error, an unknown tool, bad arguments, a purpose, a progress token, a trace key, a
2025-era ``_meta``) through a gateway as it runs now and through one with the cuts taken back (the plain
connection built by the SDK's constructor, the upstream's stdout fed to its reader a loop turn later): byte
for byte once the values each call draws afresh (record ids, session tokens, times, hashes) are masked,
answers and audit rows alike."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOLBOX = ROOT / "tests" / "gateway" / "toolbox_server.py"
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "eq", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}}

# the full path: each cut taken back where it is used
FULL = """
import sys
from mcp.server.connection import Connection
from sentinel_mcp.gateway import plain_calls

def sdk_connection(outbound, client_params, capabilities):
    c = Connection(outbound, protocol_version=plain_calls.MODERN, client_params=client_params)
    c.client_capabilities = capabilities
    c.initialized.set()
    return c

plain_calls._ready_connection = sdk_connection
from sentinel_mcp.gateway import stdout_feed

stdout_feed.feed_stdout_at_once = lambda process: False  # the upstream's reads queued a turn, as asyncio does
from sentinel_mcp.cli import main
sys.exit(main())
"""
CUT = "import sys\nfrom sentinel_mcp.cli import main\nsys.exit(main())\n"


def _calls() -> list[str]:
    def call(rid: int, name: str, arguments: Any, **meta: Any) -> str:
        params: dict[str, Any] = {"name": name, "_meta": {**META, **meta}}
        if arguments is not None:
            params["arguments"] = arguments
        return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})

    lines = [
        call(1, "tb__noop", {}),
        call(2, "tb__echo", {"text": "héllo \U0001f600 \u202e"}),
        call(3, "tb__echo", {"text": "nul\u0000byte"}),
        call(4, "tb__echo", {"text": "x" * 5000}),
        call(5, "tb__add", {"a": 1.5, "b": 2}),  # structured content: the dump's way
        call(6, "tb__nope", {}),
        call(7, "tb__echo", {"text": 5}),
        call(8, "tb__echo", {"text": "why"}, **{"sentinel/purpose": "a test"}),
        call(9, "tb__noop", {}, progressToken="p1"),
        call(10, "tb__noop", {}, traceparent="00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
        call(11, "tb__noop", None),
        call(12, "tb__echo", {"text": "é" * 10, "extra": {"k": [1, None, True]}}),
    ]
    lines.append(call(13, "tb__echo", {"text": "lone"}).replace('"lone"', '"\\ud800"'))
    older = {**META, "io.modelcontextprotocol/protocolVersion": "2025-11-25"}
    lines.append(json.dumps({"jsonrpc": "2.0", "id": 14, "method": "tools/call",
                             "params": {"name": "tb__noop", "arguments": {}, "_meta": older}}))
    return lines


def _run(tmp: Path, launcher: str) -> tuple[list[str], list[dict[str, Any]]]:
    cfg = tmp / "c.json"
    cfg.write_text(json.dumps({"mcpServers": {"tb": {"command": sys.executable, "args": [str(TOOLBOX)]}},
                               "sentinel": {"data_dir": str(tmp / "data"), "builtins": []}}))
    proc = subprocess.Popen([sys.executable, "-c", launcher, "-c", str(cfg), "serve"], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin and proc.stdout
    answers = []
    try:
        for line in _calls():  # one at a time: the sequential call of the goal
            proc.stdin.write(line.encode() + b"\n")
            proc.stdin.flush()
            answers.append(proc.stdout.readline().decode())
    finally:
        proc.stdin.close()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    (path,) = (tmp / "data" / "instances").glob("*/sentinel.db")  # the gateway's own file
    db = sqlite3.connect(path)
    db.row_factory = sqlite3.Row
    rows = [dict(r) for r in db.execute("SELECT * FROM audit ORDER BY id")]
    db.close()
    return answers, rows


_ID = re.compile(r"[0-9a-f]{32}|[0-9a-f]{64}|[A-Za-z0-9_\-]{40,}\.[A-Za-z0-9_\-.]+")


def _masked_answer(text: str) -> str:
    msg = json.loads(text)

    def walk(v: Any, key: str = "") -> Any:
        if isinstance(v, dict):
            return {k: ("<drawn>" if k.startswith("sentinel/") and k != "sentinel/purpose" else walk(v[k], k))
                    for k in v}
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, str):
            return _ID.sub("<id>", v)
        return v

    return json.dumps(walk(msg))


def _masked_row(row: dict[str, Any]) -> dict[str, Any]:
    out = dict(row)
    for key in ("chain", "ts", "decision_id", "latency_ms", "timings", "prev_hash", "hash", "session"):
        out[key] = "<drawn>" if row[key] is not None else None
    if out["proof"]:
        out["proof"] = _ID.sub("<id>", out["proof"])
    return out


@pytest.mark.timeout(240)
def test_the_cut_path_answers_and_records_what_the_full_path_does(tmp_path: Path) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "cut").mkdir()
    full_answers, full_rows = _run(tmp_path / "full", FULL)
    cut_answers, cut_rows = _run(tmp_path / "cut", CUT)
    assert len(cut_answers) == len(_calls()) and all(a.endswith("\n") for a in cut_answers)
    assert [_masked_answer(a) for a in cut_answers] == [_masked_answer(a) for a in full_answers]
    # the answers are not masked into nothing: the texts and the structured content are there
    assert "héllo" in cut_answers[1] and '"structuredContent"' in cut_answers[4]
    # (a call refused before the guard writes one row: the unknown tool, the wrong type, and now the
    # undeclared "extra" and the lone surrogate)
    assert len(cut_rows) == len(full_rows) >= 2 * len(_calls()) - 8
    assert [_masked_row(r) for r in cut_rows] == [_masked_row(r) for r in full_rows]
