"""A seeded fuzzer at every door (fuzz_mutator.py: the same cases on every run, a few hundred at most a door):
stdio in both eras, streamable HTTP in both eras (the lean paths and the SDK's), legacy SSE, A2A over HTTP
and WebSocket, the console, and HTTP framing itself. Every message due an answer gets one of JSON-RPC's
shape, none shows a traceback, and afterwards the gateway still serves a normal call, alive and bounded."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import httpx2
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from tests.conftest import free_port, wait_http

from .fuzz_doors import ENVELOPE, MODERN, a2a_bases, answer_due, leaks, mcp_bases, shape_problem, stream_door
from .fuzz_mutator import Mutator
from .rig import AUTH, ROOT, kill_tree, tree, wait_ready, write_config

pytestmark = pytest.mark.timeout(300)
SEED = 20261205
PER_DOOR = 150
BOTH = "application/json, text/event-stream"
INIT = {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def cases(seed_offset: int, bases: list[dict[str, Any]]) -> list[tuple[str, bytes]]:
    return Mutator(SEED + seed_offset, bases).cases(PER_DOOR)


def echo(mid: Any, text: str, modern: bool = False) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "rec__echo", "arguments": {"text": text}}
    if modern:
        params["_meta"] = dict(ENVELOPE)
    return {"jsonrpc": "2.0", "id": mid, "method": "tools/call", "params": params}


def ping(mid: str, modern: bool = False) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": mid, "method": "ping",
                       "params": {"_meta": dict(ENVELOPE)} if modern else {}}).encode()


def echoed(frame: dict[str, Any]) -> str:
    return str(frame["result"]["content"][0]["text"])


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


# --- stdio, both eras -------------------------------------------------------------------------------------


async def _stdio_door(tmp_path: Path, modern: bool) -> None:
    err = tmp_path / "stderr.log"
    with err.open("wb") as errf:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "sentinel_mcp", "-c", str(write_config(tmp_path)), "serve",
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errf, cwd=ROOT, start_new_session=True,
            limit=64 << 20)
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout

    async def send(raw: bytes) -> list[Any]:
        stdin.write(raw + b"\n")
        await stdin.drain()
        return []

    async def receive() -> str:
        line = await stdout.readline()
        if not line:
            raise ConnectionError("the gateway ended its stdout")
        return line.decode("utf-8", "replace")

    try:
        if modern:
            await send(ping("open", modern=True))
        else:
            await send(json.dumps(INIT).encode())
            await send(json.dumps(INITIALIZED).encode())
        assert json.loads(await asyncio.wait_for(receive(), 60))["id"] in ("open", "init")
        bad = await stream_door(cases(1 if modern else 0, mcp_bases(modern)), send, receive,
                                lambda m: ping(m, modern), lines=True)
        assert bad == [], "\n".join(bad)
        await send(json.dumps(echo("after", "still here", modern)).encode())
        while (frame := json.loads(await asyncio.wait_for(receive(), 60))).get("id") != "after":
            pass
        assert echoed(frame) == "still here", frame
        assert proc.returncode is None
    finally:
        for pid in tree(proc.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        await proc.wait()
    assert not leaks(err.read_text(errors="replace")), err.read_text(errors="replace")[-3000:]


async def test_stdio_handshake_era(tmp_path: Path) -> None:
    await _stdio_door(tmp_path, modern=False)


async def test_stdio_modern_era(tmp_path: Path) -> None:
    await _stdio_door(tmp_path, modern=True)


# --- one HTTP gateway for the HTTP doors ------------------------------------------------------------------


class Gateway:
    def __init__(self, proc: subprocess.Popen, port: int, stderr: Path) -> None:
        self.proc, self.port, self.stderr = proc, port, stderr
        self.base = f"http://127.0.0.1:{port}"

    async def serves(self) -> None:
        """A normal 2026-07-28 call is still answered, the process alive, nothing leaked to its log."""
        assert self.proc.poll() is None
        async with httpx2.AsyncClient(timeout=60, headers=AUTH) as http:
            r = await http.post(f"{self.base}/mcp", json=echo(1, "fine", modern=True), headers={
                "content-type": "application/json", "accept": BOTH, "mcp-protocol-version": MODERN,
                "mcp-method": "tools/call", "mcp-name": "rec__echo"})
        assert r.status_code == 200 and echoed(r.json()) == "fine", r.text[:500]
        log = self.stderr.read_text(errors="replace")
        assert not leaks(log), log[-3000:]


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    tmp = tmp_path_factory.mktemp("fuzz-http")
    port = free_port()
    err = tmp / "stderr.log"
    with err.open("wb") as errf:
        proc = subprocess.Popen(
            [sys.executable, "-m", "sentinel_mcp", "-c", str(write_config(tmp, timeout=60)), "serve",
             "--http", str(port)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errf, cwd=ROOT,
            start_new_session=True)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc, timeout=60)
        wait_ready(port)
        yield Gateway(proc, port, err)
    finally:
        kill_tree(proc)


def _frames(r: httpx2.Response) -> list[Any]:
    kind = r.headers.get("content-type", "")
    if kind.startswith("text/event-stream"):
        return [json.loads(line[5:]) for line in r.text.splitlines()
                if line.startswith("data:") and line[5:].strip()]
    if kind.startswith("application/json") and r.content:
        return [r.json()]
    return []


def _judge(label: str, raw: bytes, r: httpx2.Response) -> list[str]:
    """One POST's answer: no 5xx, no traceback, frames of JSON-RPC's shape, an answer when one is due."""
    bad = []
    if r.status_code >= 500 or leaks(r.text):
        bad.append(f"{label}: {r.status_code} {r.text[:200]!r}")
    try:
        frames = _frames(r)
    except ValueError:
        return [*bad, f"{label}: body not JSON {r.text[:200]!r}"]
    bad += [f"{label}: {p}" for p in map(shape_problem, frames) if p]
    flat = [x for f in frames for x in (f if isinstance(f, list) else [f])]
    if answer_due(raw) and not any(isinstance(f, dict) and ("result" in f or "error" in f) for f in flat):
        bad.append(f"{label}: unanswered, {r.status_code} {r.text[:120]!r} for {raw[:120]!r}")
    return bad


async def test_streamable_http_handshake_era(gateway: Gateway) -> None:
    """2025-06-18 in a session: tools/call takes the lean session path, everything else the SDK's."""
    async with httpx2.AsyncClient(timeout=60, headers=AUTH) as http:
        head = {"accept": BOTH, "content-type": "application/json"}
        r = await http.post(f"{gateway.base}/mcp", json=INIT, headers=head)
        head |= {"mcp-session-id": r.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
        await http.post(f"{gateway.base}/mcp", json=INITIALIZED, headers=head)
        bad = []
        for label, raw in cases(2, mcp_bases(False)):
            bad += _judge(label, raw, await http.post(f"{gateway.base}/mcp", content=raw, headers=head))
        assert bad == []
        r = await http.post(f"{gateway.base}/mcp", json=echo(9, "session fine"), headers=head)
        assert echoed(_frames(r)[-1]) == "session fine"
    await gateway.serves()


async def test_streamable_http_modern_era(gateway: Gateway) -> None:
    """2026-07-28, each request alone: tools/call takes the lean path, everything else the SDK's."""
    bad = []
    async with httpx2.AsyncClient(timeout=60, headers=AUTH) as http:
        for label, raw in cases(3, mcp_bases(True)):
            head = {"accept": BOTH, "content-type": "application/json", "mcp-protocol-version": MODERN}
            try:
                sent = json.loads(raw)
                head["mcp-method"] = str(sent["method"]).encode("ascii").decode()
                head["mcp-name"] = str(sent["params"]["name"]).encode("ascii").decode()
            except Exception:  # noqa: BLE001 - the routing headers are sent when the body has them in ASCII
                pass
            bad += _judge(label, raw, await http.post(f"{gateway.base}/mcp", content=raw, headers=head))
    assert bad == []
    await gateway.serves()


async def test_legacy_sse(gateway: Gateway) -> None:
    async with httpx2.AsyncClient(timeout=60, headers=AUTH) as http:
        async with http.stream("GET", f"{gateway.base}/sse") as stream:
            lines = stream.aiter_lines()
            endpoint = None
            async for line in lines:
                if line.startswith("data:"):
                    endpoint = line[5:].strip()
                    break
            assert endpoint
            url = gateway.base + endpoint

            async def send(raw: bytes) -> list[Any]:
                r = await http.post(url, content=raw, headers={"content-type": "application/json"})
                if r.status_code == 202:
                    return []
                assert r.status_code < 500 and not leaks(r.text), r.text[:300]
                return [r.json()]

            async def receive() -> str:
                async for line in lines:
                    if line.startswith("data:"):
                        return line[5:]
                raise ConnectionError("the stream ended")

            await send(json.dumps(INIT).encode())
            assert json.loads(await receive())["id"] == "init"
            await send(json.dumps(INITIALIZED).encode())
            assert await stream_door(cases(4, mcp_bases(False)), send, receive, ping) == []
            await send(json.dumps(echo("after", "sse fine")).encode())
            while (frame := json.loads(await asyncio.wait_for(receive(), 60))).get("id") != "after":
                pass
            assert echoed(frame) == "sse fine"
    await gateway.serves()


# --- A2A: JSON-RPC over HTTP and WebSocket ------------------------------------------------------------------


async def test_a2a_http(gateway: Gateway) -> None:
    bad = []
    async with httpx2.AsyncClient(timeout=60, headers=AUTH) as http:
        for label, raw in cases(5, a2a_bases()):
            r = await http.post(f"{gateway.base}/a2a", content=raw,
                                headers={"A2A-Version": "1.0", "content-type": "application/json"})
            bad += _judge(label, raw, r)
    assert bad == []
    await gateway.serves()


async def test_a2a_websocket(gateway: Gateway) -> None:
    async with connect(gateway.base.replace("http", "ws") + "/a2a/ws", subprotocols=["a2a.v1.json"],  # type: ignore[list-item]
                       additional_headers={"A2A-Version": "1.0", **AUTH}, max_size=16 << 20) as ws:

        async def send(raw: bytes) -> list[Any]:
            try:
                await ws.send(raw.decode("utf-8"))
            except UnicodeDecodeError:
                await ws.send(raw)  # not text: a binary frame
            return []

        async def receive() -> str:
            got = await ws.recv()
            return got if isinstance(got, str) else got.decode("utf-8", "replace")

        def marker(mark: str) -> bytes:
            return json.dumps({"jsonrpc": "2.0", "id": mark, "method": "GetTask",
                               "params": {"id": "t"}}).encode()

        try:
            # a frame past the binding's bound closes the socket as too big (test_fuzz_fronts): not here
            fitting = [(label, raw) for label, raw in cases(6, a2a_bases()) if len(raw) < 1 << 20]
            bad = await stream_door(fitting, send, receive, marker)
        except ConnectionClosed as e:
            bad = [f"the socket was closed: {e}"]
    assert bad == []
    await gateway.serves()
