"""An answer the front writes when the app behind it failed to answer still carries the safe headers.

When the app raises past every boundary or returns without an answer, uvicorn writes its own 500 after every
layer of ours has been left (the outer ones hand a request's inner awaitable back, issue 21), with its own
send: never through ``SafeHeaders``, so without the headers that keep a browser from sniffing or framing it.
Here the front of ``serve`` (the two layers, uvicorn told ASGI 3, the front's own HTTP protocol) serves apps
that fail each way over real HTTP on 127.0.0.1; every answer is read as bytes, its head parsed."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from tests.support.raw_http import raw_exchange
from tests.support.served_app import served_app

from sentinel_mcp.app.http_protocol import FrontHTTPProtocol
from sentinel_mcp.app.safe_headers import SafeHeaders
from sentinel_mcp.app.startup_failure import StartupFailure
from sentinel_mcp.core.safe_headers import SAFE_HEADERS

pytestmark = pytest.mark.timeout(120)


async def _returns_silently(scope: Any, receive: Any, send: Any) -> None:
    await receive()  # reads the request, answers nothing


async def _raises_at_once(scope: Any, receive: Any, send: Any) -> None:
    raise RuntimeError("a fault before any answer")


async def _raises_after_reading(scope: Any, receive: Any, send: Any) -> None:
    await receive()
    await asyncio.sleep(0)
    raise KeyError("a fault after a suspension")


def _returns_a_non_coroutine(scope: Any, receive: Any, send: Any) -> Any:
    # an inner app that is a plain function handing back a future that fails: the layers hand it on as is
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    done.set_exception(ValueError("a fault in a handed-back future"))
    return done


async def _answers(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"ok"})


async def _answers_with_own_csp(scope: Any, receive: Any, send: Any) -> None:
    headers = [(b"content-type", b"text/html"), (b"content-security-policy", b"default-src 'self'")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b"<p>page</p>"})


def _front(inner: Any) -> Any:
    return lambda port: StartupFailure(SafeHeaders(inner))


REQUESTS = [
    b"GET /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n",
    b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}",
    b"HEAD /console HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n",
]


@pytest.mark.parametrize("inner", [_returns_silently, _raises_at_once, _raises_after_reading,
                                   _returns_a_non_coroutine])
@pytest.mark.parametrize("request_bytes", REQUESTS)
async def test_an_app_that_fails_to_answer_gets_a_500_with_the_safe_headers(inner: Any,
                                                                            request_bytes: bytes) -> None:
    async with served_app(_front(inner), http=FrontHTTPProtocol, interface="asgi3") as port:
        status, headers, _ = await raw_exchange(port, request_bytes)
    assert status == 500
    for name, value in SAFE_HEADERS:
        assert headers.get(name) == [value], (name, headers)


@pytest.mark.parametrize("inner", [_answers, _answers_with_own_csp])
async def test_an_answer_carries_each_safe_header_once(inner: Any) -> None:
    # the head the app wrote through SafeHeaders is not given the lines a second time
    async with served_app(_front(inner), http=FrontHTTPProtocol, interface="asgi3") as port:
        status, headers, _ = await raw_exchange(port, REQUESTS[0])
    assert status == 200
    for name, _ in SAFE_HEADERS:
        assert len(headers.get(name, [])) == 1, (name, headers)
    if inner is _answers_with_own_csp:  # an app's own CSP kept, not doubled
        assert headers[b"content-security-policy"] == [b"default-src 'self'"]


async def test_a_100_continue_is_written_as_uvicorn_writes_it() -> None:
    # an interim answer is no answer a browser renders: it goes out bare, the final one with the headers
    async with served_app(_front(_answers), http=FrontHTTPProtocol, interface="asgi3") as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            writer.write(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 2\r\n"
                         b"expect: 100-continue\r\n\r\n{}")
            await writer.drain()
            first = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 60)
        finally:
            writer.close()
    assert first.startswith(b"HTTP/1.1 ")
    if first.startswith(b"HTTP/1.1 100"):
        assert first == b"HTTP/1.1 100 Continue\r\n\r\n"
    else:  # the app answered before reading the body: no interim answer at all
        assert b"x-content-type-options: nosniff" in first.lower()
