"""Credentials and request targets in the spellings a client should not send, as raw bytes on a socket to
the front as the gateway runs it (``FrontHTTPProtocol`` and ``CallerGuard`` over two principals' tokens, on
127.0.0.1): one request names exactly one principal, or gets a 4xx that says why (red team "tls4").

What broke: a bearer token and an ``X-API-Key`` of two principals were taken as the bearer's (``alice``); a
wrong bearer token beside a valid API key signed in as the key's holder; a request target in absolute form
(``GET http://evil.example/mcp``) was served by its path while the Host check read a header the target
overrides (RFC 9112 3.2.2). What held is kept: the scheme in any case, trailing whitespace, a token in the
query string, two Authorization headers, a folded or NUL-bearing one, HTTP/1.0 without Host, CORS preflights.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, AsyncIterator

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from sentinel_mcp.app.http_app import CallerGuard
from sentinel_mcp.app.http_protocol import FrontHTTPProtocol
from sentinel_mcp.identity.principal import Principal
from sentinel_mcp.identity.resolver import SCOPE_KEY, Authenticator, TokenResolver
from tests.identity.identity_rig import ALICE, BOB
from tests.support.served_app import served_app

pytestmark = pytest.mark.timeout(120)


async def who(request: Request) -> JSONResponse:
    return JSONResponse({"principal": request.scope[SCOPE_KEY].name})


@contextlib.asynccontextmanager
async def front(route: Any = who) -> AsyncIterator[int]:
    tokens = TokenResolver()
    tokens.add(Principal("alice", "token"), token=ALICE)
    tokens.add(Principal("bob", "token"), token=BOB)
    routes = [Route("/mcp", route, methods=["GET", "POST", "OPTIONS"])]

    def app_at(port: int) -> CallerGuard:
        guarded = Starlette(routes=routes)
        return CallerGuard(guarded, bind_host="127.0.0.1", port=port, auth=Authenticator([tokens]))

    async with served_app(app_at, http=FrontHTTPProtocol) as port:
        yield port


async def exchange(port: int, head: str) -> tuple[int, bytes]:
    """One request head (latin-1, the blank line added); the status and the whole answer."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(head.encode("latin-1") + b"\r\n")
        await writer.drain()
        answer = await reader.read(8192)  # the front answers, then closes or keeps alive: one read holds it
    finally:
        writer.close()
    return int(answer.split(b" ", 2)[1]), answer


def get(port: int, *lines: str, target: str = "/mcp", version: str = "HTTP/1.1", host: bool = True) -> str:
    return "".join(
        f"{x}\r\n"
        for x in (f"GET {target} {version}", *((f"Host: 127.0.0.1:{port}",) if host else ()), *lines)
    )


SIGNED_IN = [  # (label, lines) -> alice
    ("Bearer", [f"Authorization: Bearer {ALICE}"]),
    ("lower-case scheme", [f"Authorization: bearer {ALICE}"]),
    ("upper-case scheme", [f"Authorization: BEARER {ALICE}"]),
    ("trailing whitespace", [f"Authorization: Bearer {ALICE} \t "]),
    ("API key without a space", [f"X-API-Key:{ALICE}"]),
    ("bearer and key of the same principal", [f"Authorization: Bearer {ALICE}", f"X-API-Key: {ALICE}"]),
]
REFUSED = [  # (label, status, words of the answer, lines, get() keywords)
    (
        "bearer alice, key bob",
        401,
        b"different principals",
        [f"Authorization: Bearer {ALICE}", f"X-API-Key: {BOB}"],
        {},
    ),
    (
        "wrong bearer, key bob",
        401,
        b"different principals",
        ["Authorization: Bearer wrong-token", f"X-API-Key: {BOB}"],
        {},
    ),
    (
        "bearer bob, wrong key",
        401,
        b"different principals",
        [f"Authorization: Bearer {BOB}", "X-API-Key: wrong-key"],
        {},
    ),
    (
        "absolute form, foreign authority",
        400,
        b"",
        [f"Authorization: Bearer {ALICE}"],
        {"target": "http://evil.example/mcp"},
    ),
    (
        "absolute form, own authority",
        400,
        b"",
        [f"Authorization: Bearer {ALICE}"],
        {"target": "http://127.0.0.1/mcp"},
    ),
    ("asterisk form", 400, b"", [f"Authorization: Bearer {ALICE}"], {"target": "*"}),
    ("token in the query", 401, b"authentication required", [], {"target": f"/mcp?access_token={ALICE}"}),
    (
        "two Authorization headers",
        400,
        b"more than once",
        [f"Authorization: Bearer {ALICE}", f"Authorization: Bearer {BOB}"],
        {},
    ),
    ("two API keys", 400, b"more than once", [f"X-API-Key: {ALICE}", f"X-API-Key: {BOB}"], {}),
    ("Basic scheme", 401, b"authentication required", [f"Authorization: Basic {ALICE}"], {}),
    ("tab after the scheme", 401, b"authentication required", [f"Authorization: Bearer\t{ALICE}"], {}),
    ("NUL after the token", 400, b"", [f"Authorization: Bearer {ALICE}\x00"], {}),
    ("folded token", 400, b"", ["Authorization: Bearer", f" {ALICE}"], {}),
    ("space before the colon", 400, b"", [f"Authorization : Bearer {ALICE}"], {}),
    ("a latin-1 byte after the token", 401, b"invalid token", [f"Authorization: Bearer {ALICE}\xe9"], {}),
    # a no-break space or NEL is no HTTP whitespace (only SP and HTAB are): str.strip() took them off the
    # bearer token (not the API key), so the token had any number of spellings a proxy's block list misses
    ("NBSP after the token", 401, b"invalid token", [f"Authorization: Bearer {ALICE}\xa0"], {}),
    ("NBSP before the token", 401, b"invalid token", [f"Authorization: Bearer \xa0{ALICE}"], {}),
    ("NEL after the token", 401, b"invalid token", [f"Authorization: Bearer {ALICE}\x85"], {}),
    ("NBSP after the key", 401, b"invalid token", [f"X-API-Key: {ALICE}\xa0"], {}),
    (
        "HTTP/1.0 without Host",
        421,
        b"Host",
        [f"Authorization: Bearer {ALICE}"],
        {"version": "HTTP/1.0", "host": False},
    ),
    (
        "foreign Origin with a valid token",
        403,
        b"Origin",
        [f"Authorization: Bearer {ALICE}", "Origin: http://evil.example"],
        {},
    ),
]


async def test_one_request_names_one_principal_or_is_refused_saying_why() -> None:
    async with front() as port:
        for label, lines in SIGNED_IN:
            status, answer = await exchange(port, get(port, *lines))
            assert status == 200 and answer.endswith(b'{"principal":"alice"}'), (label, answer)
        for label, expected, words, lines, kw in REFUSED:
            status, answer = await exchange(port, get(port, *lines, **kw))
            assert status == expected and words in answer, (label, answer)
            assert b"alice" not in answer.partition(b"\r\n\r\n")[2], (label, answer)


async def test_cors_preflights_get_no_grant() -> None:
    """No answer carries an Access-Control-Allow-* header: a browser's preflight from any origin fails (a
    foreign one is refused outright, our own gets the 401 of a request without a token)."""
    async with front() as port:
        for origin, expected in (("http://evil.example", 403), (f"http://127.0.0.1:{port}", 401)):
            head = (
                f"OPTIONS /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: {origin}\r\n"
                "Access-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: authorization\r\n"
            )
            status, answer = await exchange(port, head)
            assert status == expected and b"access-control-allow" not in answer.lower(), (origin, answer)


async def test_a_target_split_across_reads_is_still_a_path() -> None:
    """The origin-form check reads the target's first piece: the rest of a target that arrives in pieces is
    no target of its own."""
    async with front() as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            for piece in (
                b"GET /m",
                b"cp?x=1 HTTP/1.1\r\n",
                f"Host: 127.0.0.1:{port}\r\n".encode(),
                f"Authorization: Bearer {ALICE}\r\n\r\n".encode(),
            ):
                writer.write(piece)
                await writer.drain()
                await asyncio.sleep(0.05)  # to part the reads (not a bound: joined reads pass alike)
            answer = await reader.read(8192)
        finally:
            writer.close()
        assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b'{"principal":"alice"}'), answer


async def test_trailers_never_become_headers() -> None:
    """A chunked body's trailer fields (after the last chunk) were appended to the request's headers, after
    the caller check had read them: a second ``Mcp-Session-Id`` (or ``Authorization``) there escaped the
    check that refuses a header sent twice, and the SDK's session look-up (the first) and the owner check
    (the last) read different sessions. They are dropped, as h11 drops them."""
    seen: dict[str, list[str]] = {}

    async def body_then_headers(request: Request) -> JSONResponse:
        body = await request.body()  # as the wire guard does, before anything downstream reads a header
        raw = [(k.decode(), v.decode()) for k, v in request.scope["headers"]]
        seen["headers"] = [f"{k}: {v}" for k, v in raw if k in ("mcp-session-id", "authorization")]
        return JSONResponse({"principal": request.scope[SCOPE_KEY].name, "body": body.decode()})

    async with front(body_then_headers) as port:
        for split in (True, False):
            seen.clear()
            head = (
                f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {ALICE}\r\n"
                "Mcp-Session-Id: alices\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"
            )
            trailer = f"0\r\nMcp-Session-Id: bobs\r\nAuthorization: Bearer {BOB}\r\n\r\n"
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            try:
                pieces = (head, trailer) if split else (head + trailer,)
                for piece in pieces:
                    writer.write(piece.encode())
                    await writer.drain()
                    await asyncio.sleep(0.05)  # to part the reads (not a bound: joined reads must pass too)
                answer = await reader.read(8192)
            finally:
                writer.close()
            assert answer.startswith(b"HTTP/1.1 200"), (split, answer)
            assert answer.endswith(b'{"principal":"alice","body":"hello"}'), (split, answer)
            assert seen["headers"] == ["authorization: Bearer " + ALICE, "mcp-session-id: alices"], seen


def test_the_standalone_a2a_check_takes_the_token_in_one_spelling() -> None:
    """The A2A app served on its own checks its token itself (``a2a/security.py``): the same spellings as
    the gateway's front, SP and HTAB around the token only."""
    from sentinel_mcp.a2a.security import AuthError, authenticate
    from sentinel_mcp.a2a.settings import A2ASettings

    settings = A2ASettings(token=ALICE, token_identity="alice")
    for value in (f"Bearer {ALICE}", f"bearer {ALICE} \t", f"BEARER  {ALICE}"):
        assert authenticate({"authorization": value}, "127.0.0.1", settings) == "alice", value
    for value in (f"Bearer {ALICE}\xa0", f"Bearer \xa0{ALICE}", f"Bearer {ALICE}\x85",
                  f"Bearer {ALICE}\u3000"):
        with pytest.raises(AuthError):
            authenticate({"authorization": value}, "127.0.0.1", settings)
