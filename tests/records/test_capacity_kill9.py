"""kill -9 of a gateway under the capacity row's load: 16 keep-alive HTTP clients posting 2026-07-28
single-request ``tools/call`` to the in-process no-op built-in (the lean HTTP path, the durable audit's group
commit under concurrency); and the same of 2025-11-25 calls, each client on a session of its own (the lean
session path). Every call answered before the kill has its decision row and its outcome row on
disk: an answer goes only once its own row is durable, whichever commit carried it (a group's under 16
clients; with one client, alone, the loop may commit inline: ``write_inline``). Several rounds on one store,
each killed at a random moment; then the chain verifies."""

from __future__ import annotations

import http.client
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from sentinel_mcp.gateway.call_record import META_KEY
from tests.conftest import free_port, wait_http

from .rig import ROOT, TOKEN, audit_rows, kill_tree

LAUNCHER = ROOT / "benchmarks" / "harness" / "serve_with_noop.py"  # the product and the no-op ``bench``
ROUNDS = 3
MODERN, HANDSHAKE = "2026-07-28", "2025-11-25"
TOOL = "bench__noop"
BASE = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {TOKEN}"}
HEADERS = {**BASE, "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": TOOL}


def _body(rid: str, era: str) -> str:
    params: dict = {"name": TOOL, "arguments": {}}
    if era == MODERN:
        params["_meta"] = {"io.modelcontextprotocol/protocolVersion": MODERN,
                           "io.modelcontextprotocol/clientInfo": {"name": "kill9", "version": "1"},
                           "io.modelcontextprotocol/clientCapabilities": {}}
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})


def _message(content_type: str, text: bytes) -> dict:
    """The JSON-RPC answer of a POST: its JSON body, or the last ``data:`` line of its event stream."""
    if content_type.startswith("text/event-stream"):
        data = [line[5:] for line in text.splitlines() if line.startswith(b"data:")]
        text = data[-1] if data else b"{}"
    return json.loads(text)


def _session(conn: http.client.HTTPConnection) -> dict[str, str]:
    """The headers of calls on a 2025-era session this connection opened (initialize, initialized)."""
    opening = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "kill9", "version": "1"}}}
    conn.request("POST", "/mcp", headers=BASE, body=json.dumps(opening))
    r = conn.getresponse()
    r.read()
    sid = r.getheader("mcp-session-id") or ""
    headers = {**BASE, "MCP-Protocol-Version": HANDSHAKE, "Mcp-Session-Id": sid}
    conn.request("POST", "/mcp", headers=headers,
                 body=json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    conn.getresponse().read()
    return headers


def _client(port: int, name: str, era: str, answered: dict[str, str], wrong: list[str],
            lock: threading.Lock) -> None:
    """One keep-alive connection, a call after another until the gateway is gone; each answer's decision id
    kept as soon as its bytes were read (an answer that is not the call's result: kept in ``wrong``, and the
    client stops)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        headers = HEADERS if era == MODERN else _session(conn)
        for i in range(1_000_000):
            rid = f"{name}-{i}"
            conn.request("POST", "/mcp", body=_body(rid, era), headers=headers)
            r = conn.getresponse()
            text = r.read()
            msg = _message(r.getheader("content-type") or "", text) if r.status == 200 else {}
            result = msg.get("result")
            if msg.get("id") != rid or not isinstance(result, dict) or result.get("isError"):
                wrong.append(f"{rid}: HTTP {r.status}: {text[:300]!r}")
                return
            with lock:
                answered[rid] = result["_meta"][META_KEY]
    except (OSError, http.client.HTTPException):
        return  # the gateway was killed under us: that is the point
    finally:
        conn.close()


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}


def _start(config: Path) -> tuple[subprocess.Popen, int]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(LAUNCHER), "-c", str(config), "serve", "--http", f"127.0.0.1:{port}"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        cwd=ROOT, env=_env(), start_new_session=True)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc, timeout=60)
    except BaseException:
        kill_tree(proc)
        raise
    return proc, port


@pytest.mark.parametrize("clients, era", [(16, MODERN), (1, MODERN), (16, HANDSHAKE)])
def test_every_answered_call_has_its_rows_after_kill_9(tmp_path: Path, clients: int, era: str) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"mcpServers": {}, "sentinel": {
        "data_dir": str(tmp_path / "data"), "builtins": ["bench"], "http": {"token": TOKEN}}}))
    rng = random.Random(21)
    answered: dict[str, str] = {}
    wrong: list[str] = []
    lock = threading.Lock()
    served_by = []  # the clients that had answers, each round (the load was concurrent)
    for round_ in range(ROUNDS):
        proc, port = _start(config)
        try:
            threads = [threading.Thread(target=_client, daemon=True,
                                        args=(port, f"r{round_}c{i}", era, answered, wrong, lock))
                       for i in range(clients)]
            before = len(answered)
            for t in threads:
                t.start()
            deadline = time.monotonic() + 60
            while len(answered) < before + 200 and time.monotonic() < deadline:  # under load first
                time.sleep(0.02)
            time.sleep(rng.random() * 0.5)
            os.kill(proc.pid, signal.SIGKILL)  # mid-load: calls in flight, rows in a group commit
            for t in threads:
                t.join(timeout=60)
            assert not any(t.is_alive() for t in threads)
        finally:
            kill_tree(proc)
        with lock:
            served_by.append({rid.split("-")[0] for rid in answered if rid.startswith(f"r{round_}c")})
    assert wrong == []
    assert all(len(s) == clients for s in served_by), [len(s) for s in served_by]

    rows = audit_rows(tmp_path / "data" / "sentinel.db")
    decided = {r["decision_id"] for r in rows if r["event"] == "decision" and r["tool"] == TOOL}
    outcomes = {r["decision_id"] for r in rows if r["event"] == "outcome" and r["outcome"] == "ok"}
    assert len(answered) >= ROUNDS * 200
    assert len(set(answered.values())) == len(answered)  # a decision id per call
    # zero answered calls without their decision row, zero without their outcome row
    assert [rid for rid, d in answered.items() if d not in decided] == []
    assert [rid for rid, d in answered.items() if d not in outcomes] == []
    verify = subprocess.run([sys.executable, str(LAUNCHER), "-c", str(config), "audit", "verify"],
                            capture_output=True, text=True, timeout=120, cwd=ROOT, env=_env())
    assert verify.returncode == 0 and "chain intact" in verify.stdout, verify.stdout + verify.stderr
