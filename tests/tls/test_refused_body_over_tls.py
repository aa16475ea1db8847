"""Over TLS too, a request answered before its body was read whole ends its connection once the answer is out
(TLS has no half close: the connection is closed after the answer), and the client reads the answer first
(red team "rt-front2"; the plain-HTTP case: tests/identity/test_refused_body_ends_connection.py)."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from typing import Any

from starlette.responses import PlainTextResponse
from tests.tls.tls_rig import front_in_process

from sentinel_mcp.tls.server_context import FrontTLS


async def refused(request: Any) -> PlainTextResponse:
    return PlainTextResponse("refused", status_code=401)  # answered without reading the body


async def test_a_refused_body_over_tls_ends_the_connection(pki):
    tls = FrontTLS(pki.server.cert, pki.server.key, None, None, "off")
    async with front_in_process(tls, refused) as (port, _):
        ctx = ssl.create_default_context(cafile=str(pki.ca.ca_cert_path))
        reader, writer = await asyncio.open_connection("localhost", port, ssl=ctx)
        writer.write(f"GET / HTTP/1.1\r\nHost: localhost:{port}\r\nContent-Length: {2**40}\r\n\r\n".encode())

        async def feed() -> None:
            with contextlib.suppress(OSError, ssl.SSLError):
                while True:
                    writer.write(b"a" * 65536)
                    await writer.drain()

        feeding = asyncio.create_task(feed())
        got = b""
        try:
            async with asyncio.timeout(20):
                with contextlib.suppress(ConnectionResetError, ssl.SSLError):
                    while chunk := await reader.read(65536):
                        got += chunk
        finally:
            feeding.cancel()
            with contextlib.suppress(BaseException):
                await feeding
            writer.close()
        assert got.startswith(b"HTTP/1.1 401") and got.endswith(b"refused"), got[:300]
