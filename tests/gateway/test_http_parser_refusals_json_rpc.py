"""What the HTTP front says before any route runs (red team "rt-wire6"): a request the parser refuses (400),
one read too slowly (408), a head past the bound (431), and the legacy ``/sse`` stream's refusals. They were
plain text ("Invalid HTTP request received.", uvicorn's own) or ``{"error": ...}`` while every other refusal
at /mcp, /messages/ and /a2a is a JSON-RPC error: a client of those doors was told nothing it could read.
Now each is a JSON-RPC error object (id null: no request was read) at the same status, with its reason,
whenever the request's target is a JSON-RPC route or unknown (a request line too broken to name one); a
request known to be for another route (/healthz, the console) keeps plain text. A head past the bound is a
431 however it arrived (in one read it was a 400). Each refusal closes the connection, as before: its framing
cannot be trusted for a next request. And a flood of them is logged bounded (uvicorn wrote a line for each),
with no traceback."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import free_port, stop_process, wait_http
from tests.gateway.helpers import TOOLBOX
from tests.gateway.test_http_framing import exchange, head
from tests.gateway.test_lean_calls import TOKEN

pytestmark = pytest.mark.timeout(240)
SESSION = "0123456789abcdef0123456789abcdef"


@pytest.fixture(scope="module")
def front(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A gateway with short read bounds (2 s head, 3 s body), its stderr kept to read."""
    tmp: Path = tmp_path_factory.mktemp("parser-refusals")
    cfg = tmp / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {"tb": {"command": sys.executable, "args": [TOOLBOX]}},
                               "sentinel": {"data_dir": str(tmp / "state"), "http": {"token": TOKEN}}}))
    port = free_port()
    err = tmp / "stderr.txt"
    env = {**os.environ, "SENTINEL_CAP_HTTP_HEAD_SECONDS": "2", "SENTINEL_CAP_HTTP_BODY_SECONDS": "3"}
    with err.open("wb") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http", f"127.0.0.1:{port}"],
            stdout=subprocess.DEVNULL, stderr=sink, start_new_session=True, env=env)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc)
        yield port, err
    finally:
        stop_process(proc)


def rpc_error(answer: tuple[int, Any], status: int) -> str:
    got, body = answer
    assert got == status, answer
    assert isinstance(body, dict) and set(body) == {"jsonrpc", "id", "error"}, answer
    assert body["jsonrpc"] == "2.0" and body["id"] is None, body
    assert type(body["error"]["code"]) is int and body["error"]["message"], body
    return str(body["error"]["message"])


def _at(port: int, target: str, method: str = "POST") -> bytes:
    return head(port).replace(b"POST /mcp ", f"{method} {target} ".encode())


def _cases(port: int) -> dict[str, tuple[bytes, int]]:
    auth = f"Authorization: Bearer {TOKEN}"
    host = f"Host: 127.0.0.1:{port}"
    cases: dict[str, tuple[bytes, int]] = {}
    for target in ("/mcp", f"/messages/?session_id={SESSION}", "/a2a", "/sse"):
        method = "GET" if target == "/sse" else "POST"
        base = _at(port, target, method)[:-2]
        cases |= {
            f"{target}: bad chunk size": (base + b"Transfer-Encoding: chunked\r\n\r\nzz\r\n", 400),
            f"{target}: unknown coding": (base + b"Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 400),
            f"{target}: folded header": (base + b"X-Folded: a\r\n  b\r\nContent-Length: 2\r\n\r\n{}", 400),
            f"{target}: NUL in a header": (base + b"X-Nul: a\x00b\r\nContent-Length: 2\r\n\r\n{}", 400),
            f"{target}: length twice": (base + b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}", 400),
            f"{target}: length and chunked": (
                base + b"Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
            f"{target}: head past the bound in one read": (
                base + b"X-Pad: " + b"a" * 20_000 + b"\r\n\r\n", 431),
        }
    cases |= {
        "a request line that is not one": (b"GARBAGE\r\n\r\n", 400),
        "a method with a space": (b"PO ST /mcp HTTP/1.1\r\n\r\n", 400),
        "absolute-form target": (f"POST http://127.0.0.1:{port}/mcp HTTP/1.1\r\n{host}\r\n{auth}\r\n"
                                 "Content-Length: 2\r\n\r\n{}".encode(), 400),
        "asterisk target": (f"OPTIONS * HTTP/1.1\r\n{host}\r\n\r\n".encode(), 400),
        "HTTP/2 preface": (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 400),
        "the legacy stream, no credential": (f"GET /sse HTTP/1.1\r\n{host}\r\n\r\n".encode(), 401),
        "the legacy stream, a foreign Host": (f"GET /sse HTTP/1.1\r\nHost: evil.example\r\n{auth}\r\n\r\n"
                                              .encode(), 421),
        "the legacy stream, POST": (f"POST /sse HTTP/1.1\r\n{host}\r\n{auth}\r\nContent-Length: 0\r\n\r\n"
                                    .encode(), 405),
    }
    return cases


def test_every_refusal_before_routing_is_json_rpc(front: Any) -> None:
    port, _ = front
    for label, (data, status) in _cases(port).items():
        answers = exchange(port, data)
        assert len(answers) == 1, (label, answers)
        said = rpc_error(answers[0], status)
        if status == 431:
            assert "too large" in said, (label, said)


def test_a_head_past_the_bound_in_pieces_is_431_json_rpc(front: Any) -> None:
    port, _ = front
    sock = socket.create_connection(("127.0.0.1", port), timeout=15)
    got = b""
    try:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nX-Endless: ")
        for _ in range(64):
            try:
                sock.sendall(b"a" * 1024)
            except (BrokenPipeError, ConnectionResetError):
                break
        while chunk := sock.recv(4096):
            got += chunk
    except (socket.timeout, ConnectionResetError):
        pass
    finally:
        sock.close()
    from tests.gateway.test_http_framing import parse

    [answer] = parse(got)
    assert "too large" in rpc_error(answer, 431)


def _slow(port: int, data: bytes) -> tuple[int, Any]:
    from tests.gateway.test_http_framing import parse

    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    got = b""
    try:
        sock.sendall(data)
        while chunk := sock.recv(4096):
            got += chunk
    finally:
        sock.close()
    [answer] = parse(got)
    return answer


def test_a_request_read_too_slowly_is_408_json_rpc(front: Any) -> None:
    port, _ = front
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
    slow = (b"POST /mcp HTTP/1.1\r\n", head(port, length=len(body)) + body[:5], b"POST /mc",
            b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Next: 1\r\n")
    with ThreadPoolExecutor(len(slow)) as pool:  # each waits out its read bound: side by side, not in turn
        answers = list(pool.map(lambda data: _slow(port, data), slow))
    for data, answer in zip(slow[:3], answers):
        assert "in time" in rpc_error(answer, 408), data
    # a request known to be for another route keeps its plain text
    status, text = answers[3]
    assert status == 408 and isinstance(text, bytes) and b"in time" in text


def test_other_routes_keep_plain_text(front: Any) -> None:
    port, _ = front
    for target in ("/healthz", "/metrics", "/"):
        data = f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Nul: a\x00b\r\n\r\n".encode()
        [(status, body)] = exchange(port, data)
        assert status == 400 and isinstance(body, bytes), (target, body)


def test_a_flood_of_malformed_requests_is_logged_bounded(front: Any) -> None:
    """Each refused, the log bounded (a count, not a line each), and no traceback."""
    port, err = front
    before = err.read_bytes().count(b"\n")
    for i in range(300):
        [(status, _)] = exchange(port, b"GARBAGE %d\r\n\r\n" % i)
        assert status == 400
    time.sleep(0.5)  # (the log is written by the gateway; nothing here waits on a time bound)
    said = err.read_text(errors="replace")
    assert said.count("\n") - before < 60, said[-3000:]
    assert "Traceback" not in said, said[-3000:]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_mcp_client_is_told_a_head_was_too_large(front: Any, mode: str) -> None:
    port, _ = front
    headers = {"authorization": f"Bearer {TOKEN}", "x-pad": "a" * 20_000}
    http = httpx2.AsyncClient(headers=headers, timeout=30)
    with pytest.raises(BaseException) as caught:
        async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http),
                          mode=mode) as c:
            await c.list_tools()

    def messages(e: BaseException) -> list[str]:
        return [str(e), *(m for inner in getattr(e, "exceptions", ()) for m in messages(inner))]

    said = messages(caught.value)
    assert any("too large" in m for m in said), said
    http = httpx2.AsyncClient(headers={"authorization": f"Bearer {TOKEN}"}, timeout=30)
    async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http),
                      mode=mode) as c:
        assert (await c.list_tools()).tools


def _call(port: int, rid: int, text: str) -> bytes:
    from tests.gateway.test_http_framing import echo

    body = echo(text, rid)
    return head(port, length=len(body)) + body


def test_a_client_that_ends_its_side_is_answered(front: Any) -> None:
    """A half close after the request (``nc -N``, a script's ``shutdown``): uvicorn closed the connection at
    once, so the call ran and its answer was lost. Now every answer owed goes out, then the end; a request the
    end cut short is refused (400, JSON-RPC) in its turn."""
    port, _ = front
    [(status, answer)] = exchange(port, _call(port, 1, "half one"), half_close=True)
    assert status == 200 and answer["result"]["content"][0]["text"] == "half one"
    answers = exchange(port, _call(port, 1, "first") + _call(port, 2, "second"), answers=2, half_close=True)
    assert [a["result"]["content"][0]["text"] for _, a in answers] == ["first", "second"], answers
    cut_head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1"
    for data in (cut_head, _call(port, 3, "cut body")[:-5]):
        [answer] = exchange(port, data, half_close=True)
        assert "ended before" in rpc_error(answer, 400)
    answers = exchange(port, _call(port, 4, "whole") + cut_head, answers=2, half_close=True)
    assert len(answers) == 2 and answers[0][1]["result"]["content"][0]["text"] == "whole", answers
    assert "ended before" in rpc_error(answers[1], 400)
    # nothing sent, then the end: closed, no answer (no request to answer)
    assert exchange(port, b"", half_close=True) == []


H2C = "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA"


def test_an_upgrade_the_front_does_not_serve_loses_nothing(front: Any) -> None:
    """``Upgrade: h2c`` (curl's ``--http2`` on http://): the parser takes what follows the head for the new
    protocol, and uvicorn dropped it. A call with a body ran without it ("Parse error") and a request
    pipelined behind a bodiless one was never answered. Now the one with a body is refused, saying why
    (nothing runs), and what follows a bodiless one is read as HTTP/1.1 (the upgrade is ignored, as RFC 9110
    allows)."""
    port, err = front
    upgraded = _call(port, 1, "upgraded").replace(b"\r\n\r\n", f"\r\n{H2C}\r\n\r\n".encode(), 1)
    [answer] = exchange(port, upgraded)
    assert "Upgrade" in rpc_error(answer, 400)
    plain = f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode()
    answers = exchange(port, plain + H2C.encode() + b"\r\n\r\n" + plain + b"\r\n", answers=2)
    assert [status for status, _ in answers] == [200, 200], answers
    answers = exchange(port, plain + H2C.encode() + b"\r\n\r\n" + _call(port, 2, "behind"), answers=2)
    assert answers[1][1]["result"]["content"][0]["text"] == "behind", answers
    assert "Traceback" not in err.read_text(errors="replace")
