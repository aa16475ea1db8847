"""The running gateway (``serve --http``, three principals, real HTTP on 127.0.0.1), sent an MCP
``initialize`` in the spellings a client should not use to be someone: a token in a cookie, Basic auth, a
proxy's header, a prefix or extension of alice's token, two tokens in one header, a trailing CR/VT/NUL, a
megabyte of token, non-ASCII bytes; the token in an A2A socket's subprotocol or query, or in the JSON body
(401 each); and without a token at a path that is ``/mcp`` in another spelling
(``/mcp/``, ``//mcp``, ``/MCP``, dot segments through the public ``/healthz`` or the self-authenticating
``/console/``, percent-encoded letters). None opens a session (no ``Mcp-Session-Id``, no 200) or names
alice; the one spelling still does. Held on main (red team "identity8"): pinned, beside the front-only
table of ``test_bearer_spellings_other_roads``.
"""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from tests.identity.identity_rig import ALICE, BOB, http_sentinel, write_config

pytestmark = pytest.mark.timeout(180)

INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "t", "version": "1"}}}).encode()


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


async def _post(port: int, lines: list[str], target: str = "/mcp") -> tuple[int, bytes]:
    head = (f"POST {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\nConnection: close\r\n"
            + "".join(f"{x}\r\n" for x in lines) + f"Content-Length: {len(INIT)}\r\n\r\n")
    return await _raw(port, head + INIT.decode())


async def _raw(port: int, request: str) -> tuple[int, bytes]:
    """One request (latin-1); the status and the answer, read to its end or until an initialize's answer
    (a stream that stays open once it answered)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request.encode("latin-1"))
        try:
            await writer.drain()
        except ConnectionError:  # a head the front refuses (431) may be answered before it is all written
            pass
        answer = b""
        while len(answer) < 65536:
            piece = await reader.read(8192)
            if not piece:
                break
            answer += piece
            if answer.startswith(b"HTTP/1.1 200") and b"serverInfo" in answer:
                break
    finally:
        writer.close()
    return int(answer.split(b" ", 2)[1]), answer


SPELLINGS = [  # (label, headers): each names nobody, or is refused as malformed
    ("cookie", [f"Cookie: token={ALICE}; access_token={ALICE}"]),
    ("Basic, token as the password", [f"Authorization: Basic {_b64('alice:' + ALICE)}"]),
    ("Basic, token as the user", [f"Authorization: Basic {_b64(ALICE + ':')}"]),
    ("Proxy-Authorization", [f"Proxy-Authorization: Bearer {ALICE}"]),
    ("token as the scheme", [f"Authorization: {ALICE}"]),
    ("scheme without a space", [f"Authorization: Bearer{ALICE}"]),
    ("prefix", [f"Authorization: Bearer {ALICE[:-1]}"]),
    ("extended", [f"Authorization: Bearer {ALICE}0"]),
    ("alice's then bob's", [f"Authorization: Bearer {ALICE} {BOB}"]),
    ("comma-joined", [f"Authorization: Bearer {ALICE}, Bearer {BOB}"]),
    ("two Authorization headers", [f"Authorization: Bearer {ALICE}", f"Authorization: Bearer {BOB}"]),
    ("bearer of one, key of another", [f"Authorization: Bearer {ALICE}", f"X-API-Key: {BOB}"]),
    ("vertical tab", [f"Authorization: Bearer {ALICE}\x0b"]),
    ("NUL", [f"Authorization: Bearer {ALICE}\x00"]),
    ("bare CR", [f"Authorization: Bearer {ALICE}\rX-API-Key: {BOB}"]),
    ("latin-1 byte", [f"Authorization: Bearer {ALICE}\xe9"]),
    ("NBSP", [f"Authorization: Bearer {ALICE}\xa0"]),
    ("a megabyte", [f"Authorization: Bearer {ALICE}{'a' * (1 << 20)}"]),
]
PATHS = ["/mcp/", "//mcp", "/MCP", "/healthz/../mcp", "/console/../mcp", "/%6dcp", "/mcp%00", "/mcp;x",
         "/./mcp", "/.well-known/agent-card.json/../../mcp"]


# the token where no header is: a WebSocket subprotocol or the query of the A2A socket, the JSON body's
# ``_meta`` or a field of its own (the caller check reads headers only, before any body)
_WS = ("GET /a2a/ws{query} HTTP/1.1\r\nHost: 127.0.0.1:{{port}}\r\nUpgrade: websocket\r\nConnection: Upgrade"
       "\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n{extra}\r\n")
_BODY = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "authorization": f"Bearer {ALICE}",
                    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                               "clientInfo": {"name": "t", "version": "1"},
                               "_meta": {"authorization": f"Bearer {ALICE}", "token": ALICE}}})
_ELSEWHERE = [
    ("socket subprotocol", _WS.format(query="", extra=f"Sec-WebSocket-Protocol: a2a.v1.json, {ALICE}\r\n")),
    ("socket query", _WS.format(query=f"?access_token={ALICE}&token={ALICE}", extra="")),
    ("body", "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
             "Accept: application/json, text/event-stream\r\nConnection: close\r\n"
             f"Content-Length: {len(_BODY)}\r\n\r\n" + _BODY.replace("{", "{{").replace("}", "}}")),
]


def _no_session(label: str, status: int, answer: bytes) -> None:
    head, _, body = answer.partition(b"\r\n\r\n")
    assert status in (400, 401, 404, 405, 421, 431), (label, answer[:400])
    assert b"mcp-session-id" not in head.lower() and b"serverInfo" not in body, (label, answer[:400])
    assert b"alice" not in body, (label, answer[:400])


async def test_no_spelling_and_no_path_opens_a_session(tmp_path: Path) -> None:
    with http_sentinel(write_config(tmp_path)) as (base, _):
        port = urlsplit(base).port
        assert port is not None
        for label, lines in SPELLINGS:
            _no_session(label, *await _post(port, lines))
        for target in PATHS:
            _no_session(target, *await _post(port, [], target))
            # with bob's token the path is still no other door (a 404, or /mcp itself as bob: never alice's)
            status, answer = await _post(port, [f"Authorization: Bearer {BOB}"], target)
            head = answer.partition(b"\r\n\r\n")[0].lower()
            if status == 307:  # Starlette's slash redirect: to this front's own /mcp, nowhere else
                assert f"location: http://127.0.0.1:{port}/mcp\r".encode() in head + b"\r", (target, head)
            elif unquote(target) == "/mcp":  # the server decodes the path: /mcp itself, bob's own session
                assert status == 200 and b"alice" not in answer, (target, answer[:400])
                continue
            else:
                assert status in (400, 404, 405, 421), (target, answer[:400])
            assert b"mcp-session-id" not in head, (target, head)
        for label, head in _ELSEWHERE:
            status, answer = await _raw(port, head.format(port=port))
            _no_session(label, status, answer)
            assert status == 401, (label, answer[:400])
        status, answer = await _post(port, [f"Authorization: Bearer {ALICE}"])
        assert status == 200 and b"serverInfo" in answer, answer[:400]
        assert b"mcp-session-id" in answer.partition(b"\r\n\r\n")[0].lower(), answer[:400]
