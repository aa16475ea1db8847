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

from sentinel_mcp.app.http_protocol import MAX_HEAD_BYTES
from sentinel_mcp.gateway.call_record import META_KEY
from tests.conftest import free_port, wait_http

from .fuzz_doors import ENVELOPE, MODERN, a2a_bases, answer_due, leaks, mcp_bases, shape_problem, stream_door
from .fuzz_http_bytes import FIXED, console_paths, form_bodies, mutated_heads
from .fuzz_mutator import Mutator
from .rig import AUTH, ROOT, kill_tree, tree, wait_ready, write_config

pytestmark = pytest.mark.timeout(300)
# fixed for CI; a longer hunt sets FUZZ_SEED and FUZZ_CASES (the failures name the case, the seed replays it)
SEED = int(os.environ.get("FUZZ_SEED", "20261205"))
PER_DOOR = int(os.environ.get("FUZZ_CASES", "150"))
HEAD_SECONDS, BODY_SECONDS = 2, 3
BOTH = "application/json, text/event-stream"
INIT = {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


# what longer hunts found, kept for every door (each failed before its fix)
FOUND = [
    # a value a later duplicate name discards, nested past the bound: the SDK's SSE re-read logged a traceback
    ("duplicate id nested deep", b'{"jsonrpc": "2.0", "id": ' + b"[" * 500 + b"]" * 500
     + b', "method": "ping", "params": {}, "id": "found-1"}'),
    # initialize sent as a notification on an initialized connection: a logged traceback per line
    ("initialize notification", b'{"jsonrpc": "2.0", "method": "initialize", "params": {"protocolVersion": '
     b'"2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}}'),
]


def cases(seed_offset: int, bases: list[dict[str, Any]]) -> list[tuple[str, bytes]]:
    return [*FOUND, *Mutator(SEED + seed_offset, bases).cases(PER_DOOR)]


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
    def __init__(self, proc: subprocess.Popen, port: int, stderr: Path, data: Path) -> None:
        self.proc, self.port, self.stderr, self.data = proc, port, stderr, data
        self.base = f"http://127.0.0.1:{port}"
        self.decisions: set[str] = set()  # the audit records the answers named
        self.fds, self.rss = fds(proc.pid), rss_kb(proc.pid)  # once ready, before any fuzzing

    async def serves(self) -> None:
        """A normal 2026-07-28 call is still answered, the process alive, nothing leaked to its log."""
        assert self.proc.poll() is None
        async with httpx2.AsyncClient(timeout=60, headers=AUTH) as http:
            r = await http.post(f"{self.base}/mcp", json=echo(1, "fine", modern=True), headers={
                "content-type": "application/json", "accept": BOTH, "mcp-protocol-version": MODERN,
                "mcp-method": "tools/call", "mcp-name": "rec__echo"})
        assert r.status_code == 200 and echoed(r.json()) == "fine", r.text[:500]
        log = self.stderr.read_text(errors="replace")
        assert not leaks(log), log[log.find("Traceback") - 300:][:4000]


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    tmp = tmp_path_factory.mktemp("fuzz-http")
    port = free_port()
    err = tmp / "stderr.log"
    # a request's head and body are read in bounded time (http_protocol): bounds short enough to wait out here
    env = {**os.environ, "SENTINEL_CAP_HTTP_HEAD_SECONDS": str(HEAD_SECONDS),
           "SENTINEL_CAP_HTTP_BODY_SECONDS": str(BODY_SECONDS)}
    with err.open("wb") as errf:
        proc = subprocess.Popen(
            [sys.executable, "-m", "sentinel_mcp", "-c", str(write_config(tmp, timeout=60)), "serve",
             "--http", str(port)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errf, cwd=ROOT,
            start_new_session=True, env=env)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc, timeout=60)
        wait_ready(port)
        yield Gateway(proc, port, err, tmp / "data")
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


def _judge(label: str, raw: bytes, r: httpx2.Response, gateway: Gateway) -> list[str]:
    """One POST's answer: no 5xx, no traceback, frames of JSON-RPC's shape, an answer when one is due."""
    bad = []
    if r.status_code >= 500 or leaks(r.text):
        bad.append(f"{label}: {r.status_code} {r.text[:200]!r}")
    try:
        frames = _frames(r)
    except ValueError:
        return [*bad, f"{label}: body not JSON {r.text[:200]!r}"]
    # a refusal by the caller check (Host, Origin, token, header twice) is a JSON-RPC error too, id null
    bad += [f"{label}: {p}: {r.status_code} {r.text[:300]!r}" for p in map(shape_problem, frames) if p]
    flat = [x for f in frames for x in (f if isinstance(f, list) else [f])]
    for f in flat:
        result = f.get("result") if isinstance(f, dict) else None
        meta = result.get("_meta") if isinstance(result, dict) else None
        if isinstance(meta, dict) and isinstance(meta.get(META_KEY), str):
            gateway.decisions.add(meta[META_KEY])
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
            try:
                r = await http.post(f"{gateway.base}/mcp", content=raw, headers=head)
            except httpx2.HTTPError as e:  # a connection ended without an answer
                bad.append(f"{label}: {type(e).__name__} for {raw[:200]!r} with {head}")
                continue
            bad += _judge(label, raw, r, gateway)
        assert bad == [], "\n".join(b[:400] for b in bad)
        r = await http.post(f"{gateway.base}/mcp", json=echo(9, "session fine"), headers=head)
        assert echoed(_frames(r)[-1]) == "session fine"
    await gateway.serves()


def _header_value(value: Any) -> str:
    text = str(value)
    if not (text.isascii() and text.isprintable()):
        raise ValueError("no header value")  # (a client library refuses to send it)
    return text


async def test_streamable_http_modern_era(gateway: Gateway) -> None:
    """2026-07-28, each request alone: tools/call takes the lean path, everything else the SDK's."""
    bad = []
    async with httpx2.AsyncClient(timeout=60, headers=AUTH) as http:
        for label, raw in cases(3, mcp_bases(True)):
            head = {"accept": BOTH, "content-type": "application/json", "mcp-protocol-version": MODERN}
            try:
                sent = json.loads(raw)
                head["mcp-method"] = _header_value(sent["method"])
                head["mcp-name"] = _header_value(sent["params"]["name"])
            except Exception:  # noqa: BLE001 - the routing headers are sent when the body has them as text
                pass
            try:
                r = await http.post(f"{gateway.base}/mcp", content=raw, headers=head)
            except httpx2.HTTPError as e:  # a connection ended without an answer
                bad.append(f"{label}: {type(e).__name__} for {raw[:200]!r} with {head}")
                continue
            if sum(len(k) + len(v) for k, v in head.items()) > MAX_HEAD_BYTES:
                # the head alone is refused (its body never read): an HTTP answer is what is owed
                if not 400 <= r.status_code < 500:
                    bad.append(f"{label}: a head past the bound answered {r.status_code}")
                continue
            bad += _judge(label, raw, r, gateway)
    assert bad == [], "\n".join(b[:400] for b in bad)
    await gateway.serves()


HEADER_CHOICES: dict[str, list[str | None]] = {
    "mcp-protocol-version": [MODERN, "2025-06-18", "2024-11-05", None, "", "garbage", f"{MODERN}, 2025-06-18",
                             "9999-99-99", f"{MODERN};q=1"],
    "mcp-session-id": [None, None, "", "x", "0" * 32, "../../etc", "a" * 2000, "SESSION", "SESSION,SESSION"],
    "accept": [BOTH, BOTH, "application/json", "text/event-stream", "*/*", "", None,
               "application/json;q=0, text/*"],
    "content-type": ["application/json", "application/json", "application/json; charset=utf-8",
                     "application/json; charset=latin-1", "APPLICATION/JSON", "text/json", None,
                     "application/json; boundary=x; charset=\"utf-8\""],
    "mcp-method": ["tools/call", "tools/call", "tools/list", "", None, "TOOLS/CALL"],
    "mcp-name": ["rec__echo", "rec__echo", "rec__do", "", None, "rec__echo,rec__do"],
    "mcp-param-text": [None, None, "hello", "other", "=?base64?aGk=?="],
    "last-event-id": [None, None, "0", "x" * 300, "-1"],
}


async def test_streamable_http_headers(gateway: Gateway) -> None:
    """Valid bodies under seeded hostile headers (versions, session ids, media types, routing headers sent
    twice or contradicting the body), by every method: a JSON-RPC answer to every POSTed request, never a 5xx
    or a traceback."""
    import random

    rng = random.Random(SEED + 8)
    bad = []
    async with httpx2.AsyncClient(timeout=60, headers=AUTH) as http:
        opened = await http.post(f"{gateway.base}/mcp", json=INIT,
                                 headers={"accept": BOTH, "content-type": "application/json"})
        session = opened.headers["mcp-session-id"]
        for i in range(PER_DOOR):
            head: list[tuple[str, str]] = []
            for name, values in HEADER_CHOICES.items():
                value = rng.choice(values)
                if value is not None:
                    head.append((name, value.replace("SESSION", session)))
                    if rng.random() < 0.08:  # sent twice, the second different
                        head.append((name, str(rng.choice(values) or "")))
            modern = rng.random() < 0.6
            body = json.dumps(echo(f"f{i}", "h", modern) if rng.random() < 0.7 else
                              {"jsonrpc": "2.0", "id": f"f{i}", "method": "tools/list",
                               "params": {"_meta": dict(ENVELOPE)} if modern else {}}).encode()
            method = rng.choice(["POST"] * 6 + ["GET", "DELETE", "PUT", "OPTIONS"])
            label = f"{method} {head}"
            try:
                if method == "GET":  # a stream may open: its first bytes are all that is read
                    async with http.stream("GET", f"{gateway.base}/mcp", headers=head) as r:
                        text = ""
                        if r.status_code >= 400:
                            text = (await r.aread()).decode("utf-8", "replace")
                    if r.status_code >= 500 or leaks(text):
                        bad.append(f"{label}: {r.status_code} {text[:200]!r}")
                    continue
                r = await http.request(method, f"{gateway.base}/mcp", content=body, headers=head)
            except httpx2.HTTPError as e:
                bad.append(f"{label}: {type(e).__name__}")
                continue
            if method == "POST":
                bad += _judge(label, body, r, gateway)
            elif r.status_code >= 500 or leaks(r.text):
                bad.append(f"{label}: {r.status_code} {r.text[:200]!r}")
    assert bad == [], "\n".join(b[:600] for b in bad)
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
            bad += _judge(label, raw, r, gateway)
    assert bad == [], "\n".join(b[:400] for b in bad)
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
    assert bad == [], "\n".join(b[:400] for b in bad)
    await gateway.serves()


# --- HTTP itself: heads and bodies no client library sends ------------------------------------------------


async def _exchange(port: int, raw: bytes) -> tuple[bytes, bool]:
    """Send ``raw`` and read what comes back: (bytes read, whether the server ended the connection). An answer
    with a length is read to its end; the wait is bounded well past the head and body bounds."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    data = b""
    try:
        with contextlib.suppress(ConnectionError):
            writer.write(raw)
            await writer.drain()
        while True:
            head_end = data.find(b"\r\n\r\n")
            if head_end >= 0:
                length = next((int(line.split(b":", 1)[1]) for line in data[:head_end].split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), None)
                if length is not None and len(data) >= head_end + 4 + length:
                    return data, False
            chunk = await asyncio.wait_for(reader.read(65536), HEAD_SECONDS + BODY_SECONDS + 20)
            if not chunk:
                return data, True
            data += chunk
    except asyncio.TimeoutError:
        return data, False
    except ConnectionError:
        return data, True
    finally:
        writer.close()


async def test_http_framing(gateway: Gateway) -> None:
    """Every hostile request is answered (never a 5xx; a held one within the head and body bounds), before
    its connection ends; sixty connections whose heads never end do not keep a normal call out meanwhile."""
    loris = ("slow loris", b"POST /mcp HTTP/1.1\r\nHost: x\r\n")
    cases = [*FIXED, *mutated_heads(SEED + 7, 80), *[loris] * 60]
    tasks = [asyncio.create_task(_exchange(gateway.port, raw)) for _, raw in cases]
    await gateway.serves()  # while the stalled ones are held
    bad = []
    for (label, raw), (data, ended) in zip(cases, await asyncio.gather(*tasks)):
        status = data.split(b" ", 2)[1] if data.startswith(b"HTTP/1.") and data.count(b" ") >= 2 else b""
        if leaks(data.decode("utf-8", "replace")) or status.startswith(b"5"):
            bad.append(f"{label}: {data[:200]!r}")
        elif not status:  # a refusal is answered before the end (a reset would destroy it unread)
            bad.append(f"{label}: {'ended' if ended else 'held'} without an answer ({raw[:80]!r})")
    assert bad == [], "\n".join(bad)
    await gateway.serves()


# --- the console -------------------------------------------------------------------------------------------

GET_PAGES = ["/", "/login", "/inbox", "/agent", "/agent/{run}", "/agent/audit/{decision}", "/builds",
             "/builds/{task}", "/builds/{task}/files/{path}", "/pins", "/pins/tool", "/policy", "/sessions",
             "/sessions/{sid}", "/upstreams", "/consents", "/model", "/static/{name}"]
POST_FORMS = ["/login", "/logout", "/inbox/{item}", "/inbox/assist/{request}", "/pins/accept",
              "/policy/whatif",
              "/sessions/{sid}/revoke", "/consents/revoke", "/consents/sensors/revoke"]


async def test_console(gateway: Gateway) -> None:
    """Signed in and not: hostile ids, queries and form bodies get a page or a refusal, never a 5xx or a
    traceback; afterwards the inbox still shows."""
    import re

    from .rig import CONSOLE_SECRET

    bad = []
    async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as http:
        form = await http.get(f"{gateway.base}/console/login")
        csrf = re.search(r'name="csrf" value="([0-9a-f]{64})"', form.text)
        assert csrf, form.text[:500]
        r = await http.post(f"{gateway.base}/console/login",
                            data={"csrf": csrf.group(1), "secret": CONSOLE_SECRET},
                            headers={"origin": gateway.base})
        assert r.status_code == 303, r.text[:500]
        session = dict(http.cookies)
        for signed_in in (True, False):
            http.cookies.clear()
            if signed_in:
                http.cookies.update(session)
            offset = 10 if signed_in else 20
            for path in console_paths(SEED + offset, 60, GET_PAGES):
                r = await http.get(gateway.base + path)
                if r.status_code >= 500 or leaks(r.text):
                    bad.append(f"GET {path[:120]}: {r.status_code} {r.text[:200]!r}")
            posts = console_paths(SEED + offset + 1, 60, POST_FORMS)
            for path, (kind, body) in zip(posts, form_bodies(SEED + offset + 2, 60, csrf.group(1))):
                head = {"origin": gateway.base, **({"content-type": kind} if kind else {})}
                r = await http.post(gateway.base + path, content=body, headers=head)
                if r.status_code >= 500 or leaks(r.text):
                    bad.append(f"POST {path[:120]} ({kind}): {r.status_code} {r.text[:200]!r}")
        http.cookies.clear()
        http.cookies.update(session)
        page = await http.get(f"{gateway.base}/console/inbox")
    assert bad == [], "\n".join(bad)
    assert page.status_code in (200, 303), page.status_code  # (303: a fuzzed logout may have signed it out)
    await gateway.serves()


# --- afterwards: what was answered is on disk; the process is bounded ------------------------------------


async def test_the_gateway_is_bounded_afterwards(gateway: Gateway) -> None:
    # every connection the fuzz opened is closed by now (the server's own, kept-alive, end within its bounds)
    for _ in range(300):
        if fds(gateway.proc.pid) <= gateway.fds + 16:
            break
        await asyncio.sleep(0.1)
    assert fds(gateway.proc.pid) <= gateway.fds + 16, (gateway.fds, fds(gateway.proc.pid))
    assert rss_kb(gateway.proc.pid) < gateway.rss + 400_000, (gateway.rss, rss_kb(gateway.proc.pid))
    await gateway.serves()


def test_what_was_answered_is_on_disk_after_a_kill(gateway: Gateway) -> None:
    """Every call the fuzzed doors answered with a decision has its audit record on disk, even with the
    gateway killed at once afterwards (no clean shutdown to flush anything). Last: it ends the gateway."""
    import sqlite3

    assert gateway.decisions, "the fuzzed doors answered no call with a decision: this checks nothing"
    kill_tree(gateway.proc)
    store = next(gateway.data.glob("instances/*/sentinel.db"))  # this run's instance
    with contextlib.closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True)) as db:
        stored = {row[0] for row in db.execute("SELECT DISTINCT decision_id FROM audit")}
    assert not gateway.decisions - stored, sorted(gateway.decisions - stored)[:5]
