"""The llm built-in's Cortex is built by its first call (llm/lazy_cortex.py). When that build fails (here: the
engine's module cannot be imported, as in a damaged install), ``/healthz`` says degraded and tells the
operator why, rather than a fresh engine's status as if nothing were wrong; a stranger sees the word only."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.identity import owner_token

from ..conftest import free_port, stop_process

pytestmark = pytest.mark.timeout(120)

# `serve` as a user starts it, the Cortex's module unimportable (None in sys.modules: an ImportError)
_SERVE_WITHOUT_CORTEX = ("import sys\nsys.modules['sentinel_mcp.llm.cortex'] = None\n"
                         "from sentinel_mcp.cli import main\nsys.exit(main(sys.argv[1:]))")


def _health(port: int, token: str | None = None) -> tuple[int, dict[str, Any]]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    req = urllib.request.Request(f"http://127.0.0.1:{port}/healthz", headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def _call(port: int, token: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": tool, "arguments": arguments,
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientInfo": {"name": "healthz-llm", "version": "1"},
                  "io.modelcontextprotocol/clientCapabilities": {}}}}
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/mcp", data=json.dumps(body).encode(), method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                 "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28",
                 "Mcp-Method": "tools/call", "Mcp-Name": tool})
    with urllib.request.urlopen(req, timeout=60) as answer:
        return json.loads(answer.read())["result"]


def test_a_failed_cortex_build_makes_healthz_degraded_with_the_reason(tmp_path: Path) -> None:
    state = tmp_path / "state"
    cfg = tmp_path / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {}, "sentinel": {
        "data_dir": str(state), "builtins": ["llm"], "llm": {"n_threads": 1}}}))
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-c", _SERVE_WITHOUT_CORTEX, "-c", str(cfg), "serve", "--http", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if _health(port)[1].get("status") != "starting":
                    break
            except (urllib.error.URLError, ConnectionError):
                pass
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.2)
        token = owner_token.token_path(state).read_text().strip()
        status, body = _health(port, token)
        assert (status, body["status"]) == (200, "ok"), body  # not built yet: nothing is wrong so far
        assert "problem" not in body["model"]

        result = _call(port, token, "llm__llm_generate", {"prompt": "hi", "max_tokens": 2})
        assert result.get("isError") and "could not be started" in json.dumps(result), result

        status, body = _health(port, token)
        assert (status, body["status"]) == (200, "degraded"), body
        reason = body["model"]["problem"]
        assert "could not be started" in reason and "sentinel_mcp.llm.cortex" in reason, reason
        assert any(p.startswith("llm: ") and "could not be started" in p for p in body["problems"]), body
        assert _health(port) == (200, {"status": "degraded"})  # a stranger: the word only
    finally:
        stop_process(proc)
