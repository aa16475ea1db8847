"""A WebSocket upgrade the front refuses on its own carries the safe headers, as every HTTP answer does.

uvicorn's WebSocket protocol writes some answers itself, never through ``SafeHeaders``: the ``websockets``
library's 400 to a malformed handshake (no key, a key that is not 16 bytes of base64, no or another version)
and its 414/431/405 to a head past its limits or of another method, uvicorn's 500 when the app raised or
returned before answering the upgrade, and its 403 when the app closed it before accepting. Each went out
bare: no ``nosniff``, framing allowed, cacheable, and the 400's body repeats the client's header text. Here
the front of ``serve`` (its layers, its HTTP and WebSocket protocols) serves such apps over real sockets on
127.0.0.1; every spelling of the upgrade that reaches the WebSocket protocol (the header's case,
``Connection`` listing more tokens) gets a 4xx or 500 with each safe header once, and a well-formed one still
gets its 101. (An upgrade at a path with no socket, or refused by the app, is the app's own answer through
``SafeHeaders``: tests/gateway/test_upgrade_refusals_have_bodies.py.)"""

from __future__ import annotations

from typing import Any

import pytest
from tests.support.raw_http import raw_exchange
from tests.support.served_app import served_app

from sentinel_mcp.app.http_protocol import FrontHTTPProtocol
from sentinel_mcp.app.safe_headers import SafeHeaders
from sentinel_mcp.app.startup_failure import StartupFailure
from sentinel_mcp.app.ws_protocol import FrontWebSocketProtocol
from sentinel_mcp.core.safe_headers import SAFE_HEADERS

pytestmark = pytest.mark.timeout(120)

KEY = b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
VERSION = b"Sec-WebSocket-Version: 13\r\n"
# (Upgrade, Connection): spellings a client may send for the same upgrade
SPELLINGS = [(b"Upgrade: websocket", b"Connection: Upgrade"), (b"upgrade: WebSocket", b"connection: upgrade"),
             (b"UPGRADE: WEBSOCKET", b"Connection: keep-alive, Upgrade"),
             (b"Upgrade: websocket", b"Connection: Upgrade, keep-alive")]


async def _accepts(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] == "websocket":
        await receive()
        await send({"type": "websocket.accept"})
        await send({"type": "websocket.close", "code": 1000})


async def _raises(scope: Any, receive: Any, send: Any) -> None:
    raise RuntimeError("a fault before the upgrade is answered")


async def _returns(scope: Any, receive: Any, send: Any) -> None:
    await receive()


async def _closes_first(scope: Any, receive: Any, send: Any) -> None:
    await receive()
    await send({"type": "websocket.close", "code": 1008})


def _front(inner: Any) -> Any:
    return lambda port: StartupFailure(SafeHeaders(inner))


async def _exchange(port: int, request: bytes) -> tuple[int, dict[bytes, list[bytes]], bytes]:
    return await raw_exchange(port, request, whole=True)  # a refusal's body: until the front closes


def _upgrade(spelling: tuple[bytes, bytes], extra: bytes, path: bytes = b"/a2a/ws") -> bytes:
    upgrade, connection = spelling
    head = b"GET " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n" + upgrade + b"\r\n" + connection + b"\r\n"
    return head + extra + b"\r\n"


def _safe(headers: dict[bytes, list[bytes]]) -> None:
    for name, value in SAFE_HEADERS:
        assert headers.get(name) == [value], (name, headers)


MALFORMED = {
    "no key": VERSION,
    "no version": KEY,
    "another version": KEY + b"Sec-WebSocket-Version: 8\r\n",
    "a key of the wrong length": b"Sec-WebSocket-Key: c2hvcnQ=\r\n" + VERSION,
    "a key not base64": b"Sec-WebSocket-Key: <script>alert(1)</script>\r\n" + VERSION,
    "nothing": b"",
}


@pytest.mark.parametrize("spelling", SPELLINGS)
async def test_a_malformed_handshake_is_refused_with_the_safe_headers(spelling: tuple[bytes, bytes]) -> None:
    async with served_app(_front(_accepts), http=FrontHTTPProtocol, ws=FrontWebSocketProtocol,
                          interface="asgi3") as port:
        status, headers, _ = await _exchange(port, _upgrade(spelling, KEY + VERSION))
        assert status == 101  # the spelling reaches the WebSocket protocol: well formed, it is accepted
        for why, extra in MALFORMED.items():
            status, headers, body = await _exchange(port, _upgrade(spelling, extra))
            assert 400 <= status < 500, (why, status, body)
            _safe(headers)


UPGRADE = b"Upgrade: websocket\r\nConnection: Upgrade\r\n" + KEY + VERSION
PAST_LIMITS = {  # websockets' own refusals (414, 431, 405) of heads uvicorn's parser passed on
    "many headers": b"GET /a2a/ws HTTP/1.1\r\nHost: 127.0.0.1\r\n" + UPGRADE
    + b"".join(b"X-Filler-%d: x\r\n" % i for i in range(200)) + b"\r\n",
    "a long request line": b"GET /a2a/ws?" + b"a" * 9000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n" + UPGRADE
    + b"\r\n",
    "a long header": b"GET /a2a/ws HTTP/1.1\r\nHost: 127.0.0.1\r\n" + UPGRADE + b"X-Long: " + b"a" * 9000
    + b"\r\n\r\n",
    "a POST": b"POST /a2a/ws HTTP/1.1\r\nHost: 127.0.0.1\r\n" + UPGRADE + b"\r\n",
}


@pytest.mark.parametrize("why", PAST_LIMITS)
async def test_a_head_the_websocket_library_refuses_is_refused_with_the_safe_headers(why: str) -> None:
    async with served_app(_front(_accepts), http=FrontHTTPProtocol, ws=FrontWebSocketProtocol,
                          interface="asgi3") as port:
        status, headers, body = await _exchange(port, PAST_LIMITS[why])
    assert 400 <= status < 500, (status, body)
    _safe(headers)


@pytest.mark.parametrize("inner", [_raises, _returns, _closes_first])
async def test_an_app_that_does_not_answer_the_upgrade_gets_the_safe_headers(inner: Any) -> None:
    async with served_app(_front(inner), http=FrontHTTPProtocol, ws=FrontWebSocketProtocol,
                          interface="asgi3") as port:
        status, headers, body = await _exchange(port, _upgrade(SPELLINGS[2], KEY + VERSION))
    assert status in (403, 500), (status, body)
    _safe(headers)
