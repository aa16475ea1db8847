"""A request answered before its body was read whole (refused: no credential, a body past the message
bound) ends its connection once the answer is out, as h11 ends it: the front no longer reads the rest of a
body it has already refused (red team "rt-front2").

What broke: uvicorn's httptools protocol kept the connection and read on, throwing each chunk away, until the
body ended or its 30 s bound: one client streamed 268 MB of chunked body into a refused request in a third of
a second, a core's worth of parsing for nothing per connection, again and again. The front is the gateway's
own stack (``FrontHTTPProtocol``, ``CallerGuard``, ``WireGuard``) on 127.0.0.1, raw bytes on a socket.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import AsyncIterator

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from sentinel_mcp.app.http_app import CallerGuard
from sentinel_mcp.app.http_protocol import FrontHTTPProtocol
from sentinel_mcp.core.wire_limits import MAX_MESSAGE_BYTES
from sentinel_mcp.gateway.wire_guard import WireGuard
from sentinel_mcp.identity.principal import Principal
from sentinel_mcp.identity.resolver import Authenticator, TokenResolver
from tests.identity.identity_rig import ALICE
from tests.support.served_app import served_app

pytestmark = pytest.mark.timeout(120)
PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'


async def answered(request: Request) -> JSONResponse:
    await request.body()
    return JSONResponse({"jsonrpc": "2.0", "id": 1, "result": {}})


@contextlib.asynccontextmanager
async def front() -> AsyncIterator[int]:
    tokens = TokenResolver()
    tokens.add(Principal("alice", "token"), token=ALICE)

    def app_at(port: int) -> CallerGuard:
        inner = WireGuard(Starlette(routes=[Route("/mcp", answered, methods=["POST"])]))
        return CallerGuard(inner, bind_host="127.0.0.1", port=port, auth=Authenticator([tokens]))

    async with served_app(app_at, http=FrontHTTPProtocol) as port:
        yield port


def head(port: int, framing: str, token: str | None = ALICE) -> bytes:
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    return (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}Content-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\n{framing}\r\n\r\n").encode()


async def answer_then_end(port: int, first: bytes, more: bytes) -> tuple[bytes, bool]:
    """Send ``first``, then ``more`` again and again (a body that never ends) while reading; the bytes the
    front answered and whether it ended the connection (False: it was still reading after 20 s)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    got = b""

    async def feed() -> None:
        writer.write(first)
        with contextlib.suppress(OSError):
            while True:
                writer.write(more)
                await writer.drain()

    feeding = asyncio.create_task(feed())
    try:
        async with asyncio.timeout(20):
            while chunk := await reader.read(65536):
                got += chunk
        return got, True
    except TimeoutError:
        return got, False
    finally:
        feeding.cancel()
        with contextlib.suppress(BaseException):
            await feeding
        writer.close()


CHUNK = 64 * 1024
CHUNKED = b"%x\r\n" % CHUNK + b"a" * CHUNK + b"\r\n"


@pytest.mark.parametrize("framing", ["Transfer-Encoding: chunked", f"Content-Length: {2**40}"])
@pytest.mark.parametrize("why", ["no credential", "too large"])
async def test_a_refused_body_is_not_read_on(framing: str, why: str) -> None:
    chunked = framing.startswith("Transfer")
    async with front() as port:
        first = head(port, framing, None if why == "no credential" else ALICE)
        got, ended = await answer_then_end(port, first, CHUNKED if chunked else b"a" * CHUNK)
    # a declared length past the bound is refused from the head alone (413), a chunked one once read past
    status = b"401" if why == "no credential" else b"400" if chunked else b"413"
    assert got.startswith(b"HTTP/1.1 " + status), got[:300]
    if why == "too large":
        assert f"larger than {MAX_MESSAGE_BYTES} bytes".encode() in got
    # the answer says the connection ends (a client pooling it sent its next request into a closing one)
    assert b"\r\nconnection: close\r\n" in got.split(b"\r\n\r\n", 1)[0].lower() + b"\r\n", got[:300]
    assert ended, "the front read on after answering"


async def test_a_body_read_whole_keeps_the_connection() -> None:
    async with front() as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            for _ in range(2):  # two requests on one connection: kept alive
                writer.write(head(port, f"Content-Length: {len(PING)}") + PING)
                line = await reader.readline()
                assert line.startswith(b"HTTP/1.1 200"), line
                headers = (await reader.readuntil(b"\r\n\r\n")).lower()
                assert b"connection: close" not in headers
                length = int(headers.split(b"content-length: ")[1].split(b"\r\n")[0])
                assert b'"result"' in await reader.readexactly(length)
        finally:
            writer.close()
