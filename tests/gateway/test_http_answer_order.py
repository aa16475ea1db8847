"""HTTP/1.1 answers go out in the order their requests came: whatever the front says about a request it is
still reading (408 too slow, 431 head too large, 400 malformed) never goes out ahead of the answer owed to an
earlier request on the same connection. Written ahead, the client takes it for that answer: a tools/call that
ran is reported "Request not received in time" (a 408 invites the client to send it again: it would run
twice), and its real answer is lost with the connection.
"""

from __future__ import annotations

import json
import socket
import time

import pytest

from tests.gateway import test_http_framing
from tests.gateway.test_http_framing import head, parse
from tests.gateway.test_lean_calls import call

pytestmark = pytest.mark.timeout(120)
SLOW = 4.0  # the first call's run: past the 2 s head bound below


# the gateway with short read bounds (2 s a head, 3 s a body) that test_http_framing.py starts
hurried = test_http_framing.hurried


def slow_call(port: int, rid: int) -> bytes:
    body = json.dumps(call("tb__slow", {"seconds": SLOW}, rid)).encode()
    return head(port, length=len(body)).replace(b"Mcp-Name: tb__echo", b"Mcp-Name: tb__slow") + body


def _after(port: int, first: bytes, then: bytes) -> bytes:
    """``first`` (a call that takes a while), then ``then`` half a second later on the same connection; all
    the server sends until it closes (bounded)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    got = b""
    try:
        sock.sendall(first)
        time.sleep(0.5)
        try:
            sock.sendall(then)
        except (BrokenPipeError, ConnectionResetError):
            pass
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            got += chunk
    except (socket.timeout, ConnectionResetError):
        pass
    finally:
        sock.close()
    return got


def _pipelined(port: int, what: str) -> bytes:
    echo = json.dumps(call("tb__echo", {"text": "next"}, 9)).encode()
    if what == "a head that never ends":
        return b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1\r\n"
    if what == "a body that never comes":
        return head(port, length=len(echo) + 40) + echo
    if what == "a head past the bound":
        return b"POST /mcp HTTP/1.1\r\nX-Pad: " + b"a" * 40_000
    if what == "a malformed head":
        return head(port, "Transfer-Encoding: gzip, chunked") + b"0\r\n\r\n"
    if what == "a target that is not a path":
        return b"POST http://elsewhere/mcp HTTP/1.1\r\nHost: elsewhere\r\n\r\n"
    raise AssertionError(what)


@pytest.mark.parametrize("what", ["a head that never ends", "a body that never comes",
                                  "a head past the bound", "a malformed head", "a target that is not a path"])
def test_a_refusal_of_the_next_request_never_goes_out_ahead_of_the_answer_owed(hurried: int,
                                                                                what: str) -> None:
    got = _after(hurried, slow_call(hurried, 7), _pipelined(hurried, what))
    answers = parse(got)
    assert answers, (what, got[:200])
    status, first = answers[0]
    # the first answer on the connection is the slow call's own: it ran, and says so
    assert status == 200 and isinstance(first, dict) and first.get("id") == 7, (what, got[:300])
    assert "result" in first and not first["result"].get("isError"), (what, first)
    for status, _ in answers[1:]:  # then the refusal of the request that followed, or just the close
        assert 400 <= status < 500, (what, got[:400])
