"""A call in flight is its principal's only: another principal naming its id (a request under the same id,
the id spelt as text, a cancellation, a response) on the caller's session, on its own session or in the
2026 era learns nothing of it and touches nothing: the call runs to its own answer (red team "rt-front2";
held when tried, kept so).

A real Sentinel over HTTP (the toolbox behind it), raw HTTP on 127.0.0.1; the call is held in flight by the
toolbox's ``held`` tool until the test releases it.
"""

from __future__ import annotations

import http.client
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pytest
from tests.identity.identity_rig import ALICE, BOB, http_sentinel

pytestmark = pytest.mark.timeout(120)
TOOLBOX = Path(__file__).resolve().parent.parent / "gateway" / "toolbox_server.py"
OWNER = "owner-token-0123456789abcdef"
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "in-flight", "version": "1"}}}
MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientInfo": {"name": "in-flight", "version": "1"},
               "io.modelcontextprotocol/clientCapabilities": {}}


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    tmp = tmp_path_factory.mktemp("in-flight-ids")
    cfg = tmp / "sentinel.json"
    cfg.write_text(json.dumps({
        "mcpServers": {"tb": {"command": sys.executable, "args": [str(TOOLBOX)]}},
        "sentinel": {"data_dir": str(tmp / "state"), "http": {"token": OWNER},
                     "principals": [{"name": "alice", "token": ALICE}, {"name": "bob", "token": BOB}]}}))
    with http_sentinel(cfg) as (base, _):
        yield int(base.rsplit(":", 1)[1])


Answer = tuple[int, dict[str, str], str]


def post(port: int, token: str, message: Any, headers: dict[str, str] | None = None) -> Answer:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("POST", "/mcp", json.dumps(message), {
            "Authorization": f"Bearer {token}", "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream", **(headers or {})})
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read().decode()
    finally:
        conn.close()


def session(port: int, token: str) -> dict[str, str]:
    _, headers, _ = post(port, token, INIT)
    found = {"Mcp-Session-Id": headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
    assert post(port, token, {"jsonrpc": "2.0", "method": "notifications/initialized"}, found)[0] == 202
    return found


def test_another_principal_cannot_reach_a_call_in_flight_by_its_id(port: int, tmp_path: Path) -> None:
    alice, bob = session(port, ALICE), session(port, BOB)
    marker = tmp_path / "held"
    answer: list[Answer] = []
    call = {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
            "params": {"name": "tb__held", "arguments": {"path": str(marker)}}}
    running = threading.Thread(target=lambda: answer.append(post(port, ALICE, call, alice)))
    running.start()
    try:
        for _ in range(3000):  # the call has reached the tool: it is in flight
            if marker.exists():
                break
            time.sleep(0.01)
        assert marker.exists()
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}}
        echo = {"name": "tb__echo", "arguments": {"text": "x"}}
        for message in ({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": echo},
                        {"jsonrpc": "2.0", "id": "5", "method": "ping"},
                        {"jsonrpc": "2.0", "id": "05", "method": "ping"},
                        cancel,
                        {"jsonrpc": "2.0", "id": 5, "result": {}}):
            status, _, text = post(port, BOB, message, alice)  # alice's session: not found, whatever the id
            assert status == 404 and "in flight" not in text, (message, status, text)
        # bob's own session: his cancellation names a call of his (none), never alice's
        assert post(port, BOB, cancel, bob)[0] == 202
        # the 2026 era has no cancellation by id: dropped, never matched against anyone's call
        modern = {**cancel, "params": {"requestId": 5, "_meta": MODERN_META}}
        assert post(port, BOB, modern, {"MCP-Protocol-Version": "2026-07-28"})[0] == 202
        assert running.is_alive()  # still in flight
    finally:
        Path(str(marker) + ".go").touch()
        running.join(60)
    status, _, text = answer[0]
    assert status == 200 and '"id":5' in text and "released" in text, (status, text)
