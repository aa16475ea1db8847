"""The seeded fuzzer at the HTTP doors, several clients at once, with connections cut midway (red team
"rt-wire5"): while fuzzed messages of both MCP eras and A2A arrive together, other clients send half a body
and go, declare a body and send none, or open an answer (a POST's stream, a long call, the session's GET
stream, the legacy /sse stream) and go after its first bytes. No fault reaches the log (no traceback, no
fault the app's boundary caught), nothing answers 5xx, and afterwards the gateway serves a normal call, its
connections bounded.

``FUZZ_SEED`` and ``FUZZ_CASES`` (cases per client) run longer hunts, as in ``test_fuzz_seeded.py``."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.conftest import free_port, wait_http

from .fuzz_doors import ENVELOPE, MODERN, a2a_bases, leaks, mcp_bases
from .fuzz_mutator import Mutator
from .rig import AUTH, ROOT, kill_tree, wait_ready, write_config

pytestmark = pytest.mark.timeout(600)
SEED = int(os.environ.get("FUZZ_SEED", "20261206"))
PER_CLIENT = int(os.environ.get("FUZZ_CASES", "60"))
CLIENTS = 6
BOTH = "application/json, text/event-stream"


def _fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def _request(port: int, path: str, body: bytes, head: dict[str, str], length: int | None = None) -> bytes:
    lines = [f"POST {path} HTTP/1.1", f"host: 127.0.0.1:{port}", f"content-length: {length or len(body)}",
             *(f"{k}: {v}" for k, v in {**AUTH, **head}.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def _cut(port: int, raw: bytes, read_first: bool) -> None:
    """Send ``raw`` and go: at once, or after the answer's first bytes."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(raw)
        await writer.drain()
        if read_first:
            with contextlib.suppress(asyncio.TimeoutError, ConnectionError):
                await asyncio.wait_for(reader.read(64), 20)
    except ConnectionError:
        pass
    finally:
        writer.transport.abort()  # gone, as a client that crashed or lost its network


async def _client(n: int, port: int, bad: list[str]) -> None:
    rng = random.Random(SEED * 31 + n)
    modern = n % 3 == 1
    a2a = n % 3 == 2
    cases = Mutator(SEED + 100 + n, a2a_bases() if a2a else mcp_bases(modern)).cases(PER_CLIENT)
    path = "/a2a" if a2a else "/mcp"
    head = {"content-type": "application/json", "accept": BOTH,
            **({"A2A-Version": "1.0"} if a2a else {"mcp-protocol-version": MODERN} if modern else {})}
    base = f"http://127.0.0.1:{port}"
    async with httpx2.AsyncClient(timeout=60, headers=AUTH) as http:
        if not a2a and not modern:
            init = {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "f", "version": "1"}}}
            r = await http.post(base + "/mcp", json=init, headers=head)
            head = {**head, "mcp-session-id": r.headers["mcp-session-id"],
                    "mcp-protocol-version": "2025-06-18"}
            await http.post(base + "/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                            headers=head)
        for label, raw in cases:
            action = rng.random()
            if action < 0.6:
                try:
                    r = await http.post(base + path, content=raw, headers=head)
                except httpx2.HTTPError as e:
                    bad.append(f"client {n} {label}: {type(e).__name__} for {raw[:120]!r}")
                    continue
                if r.status_code >= 500 or leaks(r.text):
                    bad.append(f"client {n} {label}: {r.status_code} {r.text[:200]!r}")
            elif action < 0.75:  # half the body, then gone
                await _cut(port, _request(port, path, raw[: len(raw) // 2], head, len(raw)), False)
            elif action < 0.85:  # a body declared, none sent
                await _cut(port, _request(port, path, b"", head, max(len(raw), 1)), False)
            elif action < 0.95:  # the whole request, then gone once the answer has begun (a stream, a call)
                await _cut(port, _request(port, path, raw, head), True)
            else:  # a stream opened (the session's GET stream, the legacy /sse one), gone at its first bytes
                target = "/sse" if a2a or modern or rng.random() < 0.5 else "/mcp"
                lines = [f"GET {target} HTTP/1.1", f"host: 127.0.0.1:{port}", "accept: text/event-stream",
                         *(f"{k}: {v}" for k, v in {**AUTH, **head}.items() if k != "content-type")]
                await _cut(port, ("\r\n".join(lines) + "\r\n\r\n").encode(), True)


def _echo(text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": "after", "method": "tools/call",
            "params": {"name": "rec__echo", "arguments": {"text": text}, "_meta": dict(ENVELOPE)}}


async def test_many_fuzz_clients_at_once_with_cut_connections(tmp_path: Path) -> None:
    port = free_port()
    err = tmp_path / "stderr.log"
    env = {**os.environ, "SENTINEL_CAP_HTTP_HEAD_SECONDS": "2", "SENTINEL_CAP_HTTP_BODY_SECONDS": "3"}
    with err.open("wb") as errf:
        proc = subprocess.Popen(
            [sys.executable, "-m", "sentinel_mcp", "-c", str(write_config(tmp_path, timeout=60)), "serve",
             "--http", str(port)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errf, cwd=ROOT,
            start_new_session=True, env=env)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc, timeout=60)
        wait_ready(port)
        fds = _fds(proc.pid)
        bad: list[str] = []
        await asyncio.gather(*(_client(n, port, bad) for n in range(CLIENTS)))
        assert bad == [], "\n".join(b[:400] for b in bad[:30])
        async with httpx2.AsyncClient(timeout=60, headers=AUTH) as http:
            r = await http.post(f"http://127.0.0.1:{port}/mcp", json=_echo("still here"), headers={
                "content-type": "application/json", "accept": BOTH, "mcp-protocol-version": MODERN,
                "mcp-method": "tools/call", "mcp-name": "rec__echo"})
        assert r.status_code == 200 and r.json()["result"]["content"][0]["text"] == "still here", r.text[:300]
        for _ in range(300):  # every cut connection is let go (read bounds: seconds)
            if _fds(proc.pid) <= fds + 16:
                break
            await asyncio.sleep(0.1)
        assert _fds(proc.pid) <= fds + 16, (fds, _fds(proc.pid))
        assert proc.poll() is None
    finally:
        kill_tree(proc)
    log = err.read_text(errors="replace")
    assert not leaks(log), log[max(0, log.find("Traceback") - 300):][:4000] + "\n...\n" + "\n".join(
        line for line in log.splitlines() if "fault" in line)[:3000]
    assert "Exception in ASGI application" not in log and "returned without" not in log, log[-3000:]
