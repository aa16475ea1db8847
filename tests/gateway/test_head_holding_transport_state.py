"""``HeadHoldingTransport.is_closing`` is the wrapped transport's own (read from a slot, not looked up through
``__getattr__`` on every answer): it follows the real connection's state whichever side closes it, and each
wrapper reads its own connection's, never another's."""

from __future__ import annotations

import asyncio

from sentinel_mcp.app.http_protocol import HeadHoldingTransport


async def _connected(server: asyncio.Server) -> asyncio.StreamWriter:
    port = server.sockets[0].getsockname()[1]
    _, writer = await asyncio.open_connection("127.0.0.1", port)
    return writer


async def test_is_closing_follows_the_connection_however_it_closes() -> None:
    loop = asyncio.get_running_loop()
    server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    a, b, c = [await _connected(server) for _ in range(3)]
    try:
        wa = HeadHoldingTransport(a.transport, loop)  # type: ignore[arg-type]
        wb = HeadHoldingTransport(b.transport, loop)  # type: ignore[arg-type]
        wc = HeadHoldingTransport(c.transport, loop)  # type: ignore[arg-type]
        assert not wa.is_closing() and not wb.is_closing() and not wc.is_closing()
        a.transport.close()  # closed under the wrapper
        assert wa.is_closing() and not wb.is_closing() and not wc.is_closing()
        wb.write(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")  # a head held, then closed by the wrapper
        wb.close()
        assert wb.is_closing() and b.transport.is_closing() and not wc.is_closing()
        wc.abort()
        assert wc.is_closing() and c.transport.is_closing()
        assert wa.get_extra_info("peername") == a.transport.get_extra_info("peername")  # the rest: its own
    finally:
        for w in (a, b, c):
            w.transport.abort()
        server.close()
        await server.wait_closed()
