"""What the HTTP front does with a body it cannot read as the message it is (red team "rt-front"), over real
HTTP on 127.0.0.1 against the gateway of ``test_lean_calls``:

- a declared ``Content-Length`` past the message bound is answered 413 at once, from the head alone: the front
  waited for every byte of a body it would refuse anyway (until the body deadline, 30 s, held open);
- a body with a ``Content-Encoding`` other than ``identity`` is a 415, the call not run: a gzip-declared body
  was read as plain JSON, so what the front ran was not what a reader honouring the header sees.
"""

from __future__ import annotations

import json
import socket

import pytest

from sentinel_mcp.core.wire_limits import MAX_MESSAGE_BYTES
from tests.gateway.test_lean_calls import call, gateway, headers_for  # noqa: F401 - its fixture

pytestmark = pytest.mark.timeout(120)


def exchange(port: int, extra: list[str], body: bytes, length: int | None = None) -> tuple[int, bytes]:
    """One POST of ``tb__echo`` with ``extra`` header lines; the status and the answer (up to its end)."""
    head = ["POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}",
            *(f"{k}: {v}" for k, v in headers_for("tb__echo").items()), *extra,
            f"Content-Length: {len(body) if length is None else length}"]
    with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
        s.sendall("".join(f"{x}\r\n" for x in head).encode("latin-1") + b"\r\n" + body)
        answer = b""
        while b"\r\n\r\n" not in answer or len(answer.partition(b"\r\n\r\n")[2]) < _length(answer):
            data = s.recv(65536)  # a timeout here (the front still waiting) fails the test
            if not data:
                break
            answer += data
    return int(answer.split(b" ", 2)[1]), answer


def _length(answer: bytes) -> int:
    for line in answer.partition(b"\r\n\r\n")[0].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return 0


BODY = json.dumps(call("tb__echo", {"text": "framed"}, 9)).encode()


@pytest.mark.parametrize("length", [MAX_MESSAGE_BYTES + 1, 10 * MAX_MESSAGE_BYTES, 10**15])
def test_a_declared_length_past_the_bound_is_answered_at_once(gateway: int, length: int) -> None:  # noqa: F811
    status, answer = exchange(gateway, [], b"", length)  # no body byte sent: the head alone says it
    assert status == 413, answer
    error = json.loads(answer.partition(b"\r\n\r\n")[2])["error"]
    assert error["code"] == -32600 and "larger than" in error["message"], answer


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br", "GZIP", "identity, gzip", "gzip, identity",
                                      "x", "", "identity;q=1"])
def test_a_body_in_another_content_coding_is_refused(gateway: int, encoding: str) -> None:  # noqa: F811
    status, answer = exchange(gateway, [f"Content-Encoding: {encoding}"], BODY)
    assert status == 415 and b"framed" not in answer, (encoding, answer)
    assert json.loads(answer.partition(b"\r\n\r\n")[2])["error"]["code"] == -32600, answer


@pytest.mark.parametrize("extra", [[], ["Content-Encoding: identity"], ["Content-Encoding: IDENTITY"]])
def test_an_identity_body_runs(gateway: int, extra: list[str]) -> None:  # noqa: F811
    status, answer = exchange(gateway, extra, BODY)
    assert status == 200 and b'"text":"framed"' in answer, answer


def test_a_content_coding_sent_twice_is_refused(gateway: int) -> None:  # noqa: F811
    status, answer = exchange(gateway, ["Content-Encoding: identity", "Content-Encoding: gzip"], BODY)
    assert status in (400, 415) and b"framed" not in answer, answer


def test_the_bytes_after_a_refused_head_are_no_request(gateway: int) -> None:  # noqa: F811
    """The refused body's bytes, shaped as a second request, are never read as one (no smuggled call)."""
    inner = json.dumps(call("tb__echo", {"text": "smuggled"}, 10)).encode()
    second = "".join(f"{x}\r\n" for x in (
        "POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{gateway}",
        *(f"{k}: {v}" for k, v in headers_for("tb__echo").items()), f"Content-Length: {len(inner)}",
    )).encode() + b"\r\n" + inner
    for extra, length in (([], MAX_MESSAGE_BYTES + 1), (["Content-Encoding: gzip"], len(second))):
        with socket.create_connection(("127.0.0.1", gateway), timeout=20) as s:
            head = ["POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{gateway}",
                    *(f"{k}: {v}" for k, v in headers_for("tb__echo").items()), *extra,
                    f"Content-Length: {length}"]
            s.sendall("".join(f"{x}\r\n" for x in head).encode() + b"\r\n" + second)
            s.shutdown(socket.SHUT_WR)  # all sent: a front that read a second request answers it, then closes
            answer = b""
            while True:
                data = s.recv(65536)  # the front closes the connection, or the timeout fails the test
                if not data:
                    break
                answer += data
        assert answer.count(b"HTTP/1.1 ") == 1 and b"smuggled" not in answer, (extra, answer)
