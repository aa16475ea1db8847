"""A chunked request's trailer fields at the real gateway (red team "tls4"): they arrive after the caller
check has read the headers, and the wire guard reads the body before anything else reads a header, so a
trailer ``Mcp-Session-Id`` used to route a 2026-era call its headers sent sessionless into the session
look-up ("session not found"). Trailers are dropped now: the call is decided on the headers that were checked.
"""

from __future__ import annotations

import json
import socket

import pytest

from tests.gateway.test_http_framing import chunked, echo, head, parse
from tests.gateway.test_lean_calls import gateway  # noqa: F401 - the module's gateway fixture

pytestmark = pytest.mark.timeout(120)


def test_a_trailer_does_not_reroute_a_checked_call(gateway: int) -> None:  # noqa: F811
    body = chunked(echo("trailed"))
    last = body.rindex(b"0\r\n\r\n")
    pieces = [
        head(gateway, "Transfer-Encoding: chunked") + body[:last],
        b"0\r\nMcp-Session-Id: planted-after-the-check\r\n\r\n",
    ]
    sock = socket.create_connection(("127.0.0.1", gateway), timeout=30)
    got = b""
    try:
        for piece in pieces:
            sock.sendall(piece)
            # the gateway has the head and is reading the body before the trailer comes (a read of its own)
            sock.settimeout(0.3)
            try:
                got += sock.recv(65536)
            except socket.timeout:
                pass
            sock.settimeout(30)
        while not parse(got):
            chunk = sock.recv(65536)
            if not chunk:
                break
            got += chunk
    finally:
        sock.close()
    [(status, answer)] = parse(got)
    assert status == 200, (status, answer)
    assert answer["result"]["content"][0]["text"] == "trailed", json.dumps(answer)[:300]
