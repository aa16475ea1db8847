"""Sentinel's own results (a hold, a refusal, an error) through the TypeScript SDK client.

That client validates ``structuredContent`` against a tool's ``outputSchema`` and throws on a mismatch, so a
hold that put Sentinel's details there would surface as an exception instead of the reason. Every toolbox tool
declares an output schema. Sentinel runs as a real process, over stdio (Claude Desktop) and streamable HTTP
(the Inspector, VS Code).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from ..conftest import free_port, stop_process
from ..gateway.helpers import TOOLBOX
from ..gateway.test_transports import start_http_sentinel
from .ts_node import run_ts_client

pytestmark = pytest.mark.timeout(180)

TOKEN = "ts-client-token-0123456789"
CALLS = [
    {"name": "tb__add", "arguments": {"a": 2, "b": 3}},  # allowed: the upstream's structured result
    {"name": "tb__delete_thing", "arguments": {"name": "x"}},  # destructive: asks the user
    {"name": "tb__echo", "arguments": {"text": "no"}},  # on the deny list
    {"name": "tb__add", "arguments": {"a": "two", "b": 3}},  # bad arguments: Sentinel's own error
    {"name": "tb__hang", "arguments": {}},  # the upstream times out: Sentinel's own error
]


def _config(tmp_path: Path) -> Path:
    cfg = tmp_path / "sentinel.json"
    cfg.write_text(json.dumps({
        "mcpServers": {"tb": {"command": sys.executable, "args": [TOOLBOX], "timeout": 1.5}},
        "sentinel": {"data_dir": str(tmp_path / "state"), "policy": {"deny": ["tb__echo"]},
                     "http": {"token": TOKEN}},
    }))
    return cfg


def _by_name(lines: list[dict[str, Any]]) -> tuple[dict[str, bool], list[dict[str, Any]]]:
    listed = {t["name"]: t["hasOutputSchema"] for t in lines[0]["listed"]}
    return listed, lines[1:]


def _check(lines: list[dict[str, Any]], elicit: str) -> None:
    listed, calls = _by_name(lines)
    assert all(listed[c["name"]] for c in CALLS), listed  # every tool called declares an outputSchema
    assert [c for c in calls if c["threw"]] == [], "the TypeScript client threw on a Sentinel result"
    allowed, delete, denied, bad, hung = calls
    assert not allowed["isError"] and allowed["structuredContent"] == {"total": 5, "terms": 2}
    for r in (delete, denied, bad, hung) if elicit != "accept" else (denied, bad, hung):
        assert r["isError"] and r["structuredContent"] is None and r["meta"], r
        assert all(k.startswith(("sentinel/", "io.modelcontextprotocol/")) for k in r["meta"]), r["meta"]
    if elicit == "none":
        assert delete["meta"]["sentinel/decision"] == "ask" and delete["meta"]["sentinel/blocked"] is True
        assert delete["meta"]["sentinel/questions"][0]["answer_schema"]["type"] == "object"
        assert "Ask the user" in delete["text"]
    elif elicit == "decline":
        assert "declined" in delete["text"]
    else:
        assert not delete["isError"] and delete["structuredContent"] == {"result": "deleted x"}
    assert denied["meta"]["sentinel/decision"] == "deny" and "deny list" in denied["text"]
    assert denied["meta"]["sentinel/how_to_unblock"]
    assert "invalid arguments" in bad["text"]
    assert hung["meta"]["sentinel/error"] == "timeout" and hung["meta"]["sentinel/upstream"] == "tb"


@pytest.mark.parametrize("elicit", ["none", "decline", "accept"])
def test_ts_sdk_client_over_stdio_accepts_every_sentinel_result(tmp_path, elicit):
    cfg = _config(tmp_path)
    plan = {"server": {"command": sys.executable, "args": ["-m", "sentinel_mcp", "-c", str(cfg), "serve"]},
            "elicit": elicit, "calls": CALLS}
    _check(run_ts_client(plan, tmp_path), elicit)


def test_ts_sdk_client_over_streamable_http_accepts_every_sentinel_result(tmp_path):
    port = free_port()
    proc = start_http_sentinel(_config(tmp_path), port)
    try:
        plan = {
            "server": {
                "url": f"http://127.0.0.1:{port}/mcp",
                "headers": {"Authorization": f"Bearer {TOKEN}"},
            },
            "elicit": "none",
            "calls": CALLS,
        }
        _check(run_ts_client(plan, tmp_path), "none")
    finally:
        stop_process(proc)
