"""The front's protocol (``app/http_protocol.FrontHTTPProtocol``) reads a request's headers as uvicorn's own
httptools protocol reads them, and logs an answer as uvicorn does, with uvicorn's per-header step and its
access-log arguments written out (issue 21): the same raw requests, many header spellings among them, give
the same headers to the app and the same bytes back under both protocols, on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Any

import pytest
from uvicorn.protocols.http import httptools_impl
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from sentinel_mcp.app.http_protocol import FrontHTTPProtocol
from tests.support.served_app import served_app

pytestmark = pytest.mark.timeout(120)


async def echo_headers(scope: Any, receive: Any, send: Any) -> None:
    """The headers the app was given, and the body it read (reading it sends a 100 Continue if expected)."""
    body = b""
    more = True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    text = json.dumps({"headers": [[k.decode("latin-1"), v.decode("latin-1")] for k, v in scope["headers"]],
                       "body": body.decode("latin-1")}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(text)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": text})


async def raw(port: int, head: bytes, body: bytes = b"", *, wait_continue: bool = False) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(head)
        got = b""
        if wait_continue:
            got = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        writer.write(body)
        await writer.drain()
        while not got.endswith(b"}"):
            chunk = await asyncio.wait_for(reader.read(65536), 10)
            if not chunk:
                break
            got += chunk
    finally:
        writer.close()
    return re.sub(rb"date: [^\r]*\r\n", b"", got)


SPELLINGS = [
    [b"X-Plain: a"],
    [b"X-Trailing: a  \t", b"X-Leading:   b", b"x-MiXeD-CaSe: MiXeD"],
    [b"X-Empty:", b"X-Spaces:    ", b"X-Tabs:\t\t"],
    [b"X-Dup: 1", b"x-dup: 2", b"X-DUP: 3"],
    [b"X-Latin: caf\xe9 \xff", b"X-Inner: a \t b"],
    [b"Expect: 100-Continue  ", b"X-After: z"],
    [b"Expect: something-else"],
    [b"TRANSFER-ENCODING: chunked"],
    [b"X-Long: " + b"v" * 4000],
    [f"X-Many-{i}: {i}".encode() for i in range(60)],
]


def request(lines: list[bytes], body: bytes) -> bytes:
    chunked = any(line.lower().startswith(b"transfer-encoding") for line in lines)
    framing = [] if chunked else [b"Content-Length: %d" % len(body)]
    return b"\r\n".join([b"POST /h HTTP/1.1", b"Host: front.test", *framing, *lines, b"", b""])


async def answers(protocol: type[HttpToolsProtocol]) -> list[bytes]:
    out = []
    async with served_app(lambda port: echo_headers, http=protocol) as port:
        for lines in SPELLINGS:
            chunked = any(line.lower().startswith(b"transfer-encoding") for line in lines)
            body = b"5\r\nhello\r\n0\r\n\r\n" if chunked else b"hello"
            expect = any(line.lower().startswith(b"expect: 100-continue") for line in lines)
            out.append(await raw(port, request(lines, body), body, wait_continue=expect))
    return out


async def test_the_front_reads_headers_and_answers_as_uvicorns_protocol_does() -> None:
    front, uvicorn_own = await answers(FrontHTTPProtocol), await answers(HttpToolsProtocol)
    assert front == uvicorn_own
    # and the spellings did reach the app as uvicorn gives them: lowered names, no trailing whitespace
    first = json.loads(front[1].split(b"\r\n\r\n", 1)[1])["headers"]
    assert ["x-trailing", "a"] in first and ["x-mixed-case", "MiXeD"] in first
    assert front[5].startswith(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK")  # Expect noted
    assert not front[6].startswith(b"HTTP/1.1 100")


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


async def logged(level: int, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], int]:
    """The access lines logged for three answers with the access logger at ``level``, and how many times the
    line's client address was worked out."""
    asked = []
    real = httptools_impl.get_client_addr
    monkeypatch.setattr(httptools_impl, "get_client_addr", lambda scope: asked.append(1) or real(scope))
    handler = Lines()
    log = logging.getLogger("uvicorn.access")
    async with served_app(lambda port: echo_headers, http=FrontHTTPProtocol, log_level="info") as port:
        # after uvicorn's own logging setup (it sets the levels when the server is built)
        log.addHandler(handler)
        old = log.level
        log.setLevel(level)
        try:
            for n in range(3):
                await raw(port, request([b"X-N: %d" % n], b"hello"), b"hello")
        finally:
            log.setLevel(old)
            log.removeHandler(handler)
    return handler.lines, len(asked)


async def test_an_enabled_access_log_still_gets_its_line_per_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    lines, asked = await logged(logging.INFO, monkeypatch)
    assert len(lines) == 3 and asked == 3
    assert all(re.fullmatch(r'127\.0\.0\.1:\d+ - "POST /h HTTP/1\.1" 200', line) for line in lines), lines


async def test_a_disabled_access_log_builds_no_line(monkeypatch: pytest.MonkeyPatch) -> None:
    # uvicorn worked out the client address and path for every answer, then found the logger disabled
    lines, asked = await logged(logging.WARNING, monkeypatch)
    assert lines == [] and asked == 0
