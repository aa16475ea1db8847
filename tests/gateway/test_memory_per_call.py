"""Issue 21's memory goal, counted instead of read from RSS: a real gateway process (the capacity row's, the
no-op built-in behind the default guard, durable audit, streamable HTTP) serves 2026-07-28 calls that carry
no session (each opens a conversation, as wrk's load does), and the memory probe of the benchmarks
(``benchmarks/harness/memory_probe.py``) counts its objects by type and the lengths of its large containers
after a warm-up and again after more calls.

What one such call may leave behind is its conversation in the registry (``Conversations``: bounded at its
capacity, ``tests/identity/test_units.py``; an id and a slot in its map and in its order queue, no object:
``tests/identity/test_conversation_entry_bytes.py``) and nothing else: every other type, and every other
container's length, must stay as it was. A leak of one object, one map entry or one list item a call fails
it (by hundreds); the RSS row of ``hot_path.py`` would need 100k calls and a quiet machine to see the same.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tests.conftest import free_port, stop_process, wait_http

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "benchmarks" / "harness" / "memory_probe.py"
TOKEN = "memory-test-token-0123456789abcdef"
MODERN = "2026-07-28"
# past the sealed ids kept to hand out again (``conversations.RESEALED``, 2,048), which also fill a call
# at a time: from there on only the registry may grow
WARM_UP = 2_300
MEASURED = 800
CLIENTS = 4  # kept-alive connections, each its own thread


def _body(n: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {
        "name": "bench__noop", "arguments": {},
        "_meta": {"io.modelcontextprotocol/protocolVersion": MODERN,
                  "io.modelcontextprotocol/clientInfo": {"name": "memory-test", "version": "1"},
                  "io.modelcontextprotocol/clientCapabilities": {}}}}).encode()


HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
           "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "bench__noop",
           "Authorization": f"Bearer {TOKEN}"}


def _calls(port: int, first: int, count: int) -> None:
    """``count`` calls on one kept-alive connection, each answered with the no-op's result."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        for n in range(first, first + count):
            conn.request("POST", "/mcp", _body(n), HEADERS)
            answer = conn.getresponse()
            text = answer.read().decode()
            assert answer.status == 200 and '"isError":false' in text.replace(" ", ""), text[:300]
    finally:
        conn.close()


def _load(port: int, start: int, count: int) -> None:
    share = count // CLIENTS
    with ThreadPoolExecutor(CLIENTS) as pool:
        for f in [pool.submit(_calls, port, start + i * share, share) for i in range(CLIENTS)]:
            f.result()


def _probe(proc: subprocess.Popen[Any], report: Path) -> dict[str, Any]:
    before = report.stat().st_mtime_ns if report.exists() else 0
    proc.send_signal(signal.SIGUSR1)
    for _ in range(600):
        if report.exists() and report.stat().st_mtime_ns != before:
            return json.loads(report.read_text())
        assert proc.poll() is None, "the gateway died"
        time.sleep(0.1)
    raise AssertionError("the probe did not answer")


def test_a_call_without_a_session_leaves_only_its_conversation_behind(tmp_path: Path) -> None:
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"mcpServers": {}, "sentinel": {
        "data_dir": str(tmp_path / "data"), "builtins": ["bench"],
        "rulebases": [str(ROOT / "rulebases" / "default.pl")], "http": {"token": TOKEN}}}))
    port, report = free_port(), tmp_path / "probe.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "ignore", "MEMORY_PROBE": str(report),
           "MEMORY_PROBE_FRAMES": "0", "MEMORY_PROBE_CONTAINERS": "1"}
    cmd = [sys.executable, str(PROBE), "-c", str(cfg), "serve", "--http", f"127.0.0.1:{port}"]
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc, timeout=90)
        _load(port, 1, WARM_UP)
        _probe(proc, report)  # the probe's own first use (its imports) is not the gateway's
        first = _probe(proc, report)
        _load(port, 10 * WARM_UP, MEASURED)
        last = _probe(proc, report)
    finally:
        stop_process(proc)
    grown = {k: v - first["types"].get(k, 0) for k, v in last["types"].items()}
    # the registry keeps a call's conversation as its id (none evicted: it holds 20,000), not as an object
    assert grown.pop("Conversation", 0) <= CLIENTS
    # a few objects come and go with the connections and tasks alive at each probe; one a call left behind
    # would be 800, one every ten calls 80
    # asyncio keeps a cancelled timer (a call's deadline) in its heap until it is due, or until more than 100
    # and half of the heap are cancelled: up to ~100 of them (and their contexts) at any probe, not a call's
    timers = last["types"].get("TimerHandle", 0)
    assert timers <= 250, timers
    grown["Context"] = grown.get("Context", 0) - max(grown.pop("TimerHandle", 0), 0)  # one for each timer
    # likewise dead weak references (their object gone): the sqlite3 module's connections keep one for each
    # cursor they made and drop the dead ones every 200 cursors (+33 to +92 here, seen held by them)
    grown["ReferenceType"] = grown.get("ReferenceType", 0) - max(grown.pop("weakref to NoneType", 0), 0)
    top = sorted(grown.items(), key=lambda kv: -kv[1])[:10]
    assert {k: v for k, v in grown.items() if v >= MEASURED // 10} == {}, top
    assert sum(max(v, 0) for v in grown.values()) < MEASURED // 4, top
    # the containers: the registry's map and its order queue grew by a call each, no other one grew (a map of
    # strings kept per call would, though none of its items is an object the collector counts)
    before, after = first["containers"], last["containers"]
    assert len(before) < 200 and len(after) < 200  # the probe lists them all
    assert sum(after) - sum(before) <= 2 * MEASURED + 256, (before[:10], after[:10])
    assert after[1] >= MEASURED + WARM_UP  # the registry's map and queue, with every conversation in each
