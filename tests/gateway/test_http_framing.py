"""HTTP/1.1 framing tricks against /mcp, sent as raw bytes on a socket (whatever parser uvicorn runs:
h11 or httptools): every request gets an answer or the connection is closed, never a tool call run from a
message the framing made ambiguous, and a well-framed call in an unusual spelling (chunked, pipelined) is
served like the plain one.
"""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest

from tests.gateway.test_lean_calls import TOKEN, call, gateway  # noqa: F401 - the module's gateway fixture

pytestmark = pytest.mark.timeout(120)


def head(port: int, *lines: str, length: int | None = None) -> bytes:
    base = ["POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}", "Content-Type: application/json",
            "Accept: application/json, text/event-stream", "MCP-Protocol-Version: 2026-07-28",
            "Mcp-Method: tools/call", "Mcp-Name: tb__echo", f"Authorization: Bearer {TOKEN}"]
    if length is not None:
        base.append(f"Content-Length: {length}")
    return ("\r\n".join([*base, *lines]) + "\r\n\r\n").encode()


def exchange(port: int, data: bytes, *, answers: int = 1, half_close: bool = False) -> list[tuple[int, Any]]:
    """Send ``data`` (then end the sending side when ``half_close``), read until ``answers`` responses came
    or the server closed (bounded by the socket timeout)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=15)
    got = b""
    try:
        sock.sendall(data)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        while len(parse(got)) < max(answers, 1):
            chunk = sock.recv(65536)
            if not chunk:
                break
            got += chunk
    except (socket.timeout, ConnectionResetError):
        pass
    finally:
        sock.close()
    return parse(got)


def parse(raw: bytes) -> list[tuple[int, Any]]:
    out = []
    while raw.startswith(b"HTTP/1."):
        top, sep, rest = raw.partition(b"\r\n\r\n")
        if not sep:
            break
        lines = top.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        fields = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
        if "content-length" not in fields:
            out.append((status, rest))
            break
        n = int(fields["content-length"])
        if len(rest) < n:
            break
        body, raw = rest[:n], rest[n:]
        try:
            out.append((status, json.loads(body)))
        except ValueError:
            out.append((status, body))
    return out


def echo(text: str, rid: int = 7) -> bytes:
    return json.dumps(call("tb__echo", {"text": text}, rid)).encode()


def chunked(body: bytes, size: int = 10) -> bytes:
    parts = [b"%x\r\n%s\r\n" % (len(body[i:i + size]), body[i:i + size]) for i in range(0, len(body), size)]
    return b"".join(parts) + b"0\r\n\r\n"


def test_a_chunked_call_is_served_like_a_plain_one(gateway: int) -> None:  # noqa: F811
    data = head(gateway, "Transfer-Encoding: chunked") + chunked(echo("chunks"))
    [(status, body)] = exchange(gateway, data)
    assert status == 200 and body["result"]["content"][0]["text"] == "chunks"


def test_pipelined_calls_are_answered_in_order(gateway: int) -> None:  # noqa: F811
    bodies = [echo(f"p{i}", rid=i) for i in range(3)]
    data = b"".join(head(gateway, length=len(b)) + b for b in bodies)
    answers = exchange(gateway, data, answers=3)
    assert [a[1]["id"] for a in answers] == [0, 1, 2]
    assert [a[1]["result"]["content"][0]["text"] for a in answers] == ["p0", "p1", "p2"]


@pytest.mark.parametrize("label,data", [
    ("length and chunked both (smuggling)", lambda p, b: head(p, "Transfer-Encoding: chunked", length=len(b))
     + chunked(b) + b"POST /mcp HTTP/1.1\r\n\r\n"),
    ("two different lengths", lambda p, b: head(p, f"Content-Length: {len(b) + 5}", length=len(b)) + b),
    ("negative length", lambda p, b: head(p, "Content-Length: -1") + b),
    ("length not a number", lambda p, b: head(p, "Content-Length: 1e3") + b),
    ("bad chunk size", lambda p, b: head(p, "Transfer-Encoding: chunked") + b"zz\r\n" + b + b"\r\n0\r\n\r\n"),
    ("unknown transfer coding", lambda p, b: head(p, "Transfer-Encoding: gzip, chunked") + chunked(b)),
    ("obsolete folded header", lambda p, b: head(p, "X-Folded: a\r\n  b", length=len(b)) + b),
    ("space before colon", lambda p, b: head(p, "Content-Length : 3", length=len(b)) + b),
    ("NUL in a header", lambda p, b: head(p, "X-Nul: a\x00b", length=len(b)) + b),
    ("header too long", lambda p, b: head(p, "X-Long: " + "a" * 200_000, length=len(b)) + b),
    ("body shorter than its length", lambda p, b: head(p, length=len(b) + 50) + b),
    ("oversized chunked body", lambda p, b: head(p, "Transfer-Encoding: chunked")
     + chunked(json.dumps(call("tb__echo", {"text": "a" * 5_000_000})).encode(), 1 << 20)),
    ("json body, form content type", lambda p, b: head(p, length=len(b)).replace(
        b"application/json\r\n", b"application/x-www-form-urlencoded\r\n") + b),
    ("json body, no content type", lambda p, b: head(p, length=len(b)).replace(
        b"Content-Type: application/json\r\n", b"") + b),
    ("transfer coding not chunked", lambda p, b: head(p, "Transfer-Encoding: identity", length=len(b)) + b),
    ("chunked twice", lambda p, b: head(p, "Transfer-Encoding: chunked", "Transfer-Encoding: chunked")
     + chunked(b)),
    ("text content type first, json second", lambda p, b: head(p, length=len(b)).replace(
        b"Content-Type: application/json",
        b"Content-Type: text/plain\r\nContent-Type: application/json") + b),
    ("bare LF line ends", lambda p, b: head(p, length=len(b)).replace(b"\r\n", b"\n") + b),
])
def test_framing_tricks_get_an_answer_and_run_nothing(gateway: int, label: str, data: Any) -> None:  # noqa: F811
    # a body cut short: the client ends its side, the server must not wait or run a partial call
    answers = exchange(gateway, data(gateway, echo(f"framing {label}")), half_close="shorter" in label)
    if "shorter" not in label:  # that one may also just be closed
        assert len(answers) == 1, (label, answers)
    for status, body in answers:
        assert 400 <= status < 500, (label, status, body)
        assert not (isinstance(body, dict) and "result" in body), (label, body)


def test_a_head_past_the_bound_is_refused_and_one_below_is_served(gateway: int) -> None:  # noqa: F811
    body = echo("bounded head")
    [(status, answer)] = exchange(gateway, head(gateway, "X-Pad: " + "a" * 12_000, length=len(body)) + body)
    assert status == 200 and answer["result"]["content"][0]["text"] == "bounded head"
    [(status, _)] = exchange(gateway, head(gateway, "X-Pad: " + "a" * 17_000, length=len(body)) + body)
    assert status in (400, 431)
    # a head that never ends, sent in small pieces: refused once past the bound, not buffered on
    sock = socket.create_connection(("127.0.0.1", gateway), timeout=15)
    try:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nX-Endless: ")
        got = b""
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
    assert got.startswith(b"HTTP/1.1 431") or got.startswith(b"HTTP/1.1 400"), got[:80]


def _trickle(port: int, first: bytes, then: bytes, every: float) -> bytes:
    """Send ``first``, then ``then`` every ``every`` seconds (never finishing the request) until the server
    answers or closes; what it sent back."""
    import time

    sock = socket.create_connection(("127.0.0.1", port), timeout=2)
    got = b""
    started = time.monotonic()
    try:
        if first:
            sock.sendall(first)
        while time.monotonic() - started < 90:  # far past the bounds: a server that never closes fails here
            try:
                chunk = sock.recv(4096)
                if not chunk:
                    return got
                got += chunk
            except socket.timeout:
                pass
            if then:
                try:
                    sock.sendall(then)
                except (BrokenPipeError, ConnectionResetError):
                    return got
            if every > 2:
                time.sleep(every - 2)
    except ConnectionResetError:
        return got
    finally:
        sock.close()
    raise AssertionError(f"the connection was held for 90 s: {got[:80]!r}")


@pytest.fixture(scope="module")
def hurried(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A gateway whose bounds on reading a request are short (2 s for a head, 3 s for a body; 10 and 30 by
    default): what a bound does is the same, the test waits less for it."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from tests.conftest import free_port, stop_process, wait_http
    from tests.gateway.helpers import TOOLBOX

    tmp: Path = tmp_path_factory.mktemp("hurried")
    cfg = tmp / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {"tb": {"command": sys.executable, "args": [TOOLBOX]}},
                               "sentinel": {"data_dir": str(tmp / "state"), "http": {"token": TOKEN}}}))
    port = free_port()
    env = {**os.environ, "SENTINEL_CAP_HTTP_HEAD_SECONDS": "2", "SENTINEL_CAP_HTTP_BODY_SECONDS": "3"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, env=env)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc)
        yield port
    finally:
        stop_process(proc)


def test_a_request_read_too_slowly_is_cut_off_and_others_are_served(hurried: int) -> None:
    """Slowloris: a head sent a line at a time, a connection that sends nothing, a body that stalls, a
    kept-alive connection's next head that never ends. Each is answered 408 (or closed) after its bound,
    not held for hours, and a normal call is served meanwhile."""
    from concurrent.futures import ThreadPoolExecutor

    body = echo("after the slow ones")
    cases = {
        "head a line at a time": (b"POST /mcp HTTP/1.1\r\n", b"X-Slow: 1\r\n", 2.0),
        "nothing at all": (b"", b"", 2.0),
        "a body that stalls": (head(hurried, length=len(body)) + body[:5], b"", 2.0),
        "the next head on a kept-alive connection": (head(hurried, length=len(body)) + body + b"POST /mcp HT",
                                                     b"", 2.0),
    }
    with ThreadPoolExecutor(len(cases)) as pool:
        futures = {name: pool.submit(_trickle, hurried, *args) for name, args in cases.items()}
        [(status, answer)] = exchange(hurried, head(hurried, length=len(body)) + body)
        assert status == 200 and answer["result"]["content"][0]["text"] == "after the slow ones"
        for name, future in futures.items():
            got = future.result()  # closed within its bound (``_trickle`` fails a connection held on)
            if name.startswith("the next head"):  # its first answer, then 408 or the keep-alive close
                assert got.startswith(b"HTTP/1.1 200") and got.count(b"HTTP/1.1 ") <= 2, got[:200]
            else:
                assert got == b"" or got.startswith(b"HTTP/1.1 408"), (name, got[:200])


def test_the_server_takes_the_file_descriptors_the_system_grants() -> None:
    import resource

    from sentinel_mcp.app.serve import _more_file_descriptors

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(256, hard), hard))
        _more_file_descriptors()
        now, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        assert now == (hard if hard != resource.RLIM_INFINITY else 65536)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
