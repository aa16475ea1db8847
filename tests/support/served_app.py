"""An ASGI app served by uvicorn on a free port of 127.0.0.1 in the test's own event loop: ``app_at(port)``
builds it once the port is known (a caller check is told the port it guards), and ``closing`` runs after the
server is told to stop, before it is waited for (a TLS acceptor's handshakes would otherwise hold it)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import uvicorn


@contextlib.asynccontextmanager
async def served_app(
    app_at: Callable[[int], Any],
    *,
    closing: Callable[[], Awaitable[None]] | None = None,
    log_level: str = "critical",
    **config: Any,
) -> AsyncIterator[int]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app_at(port), log_level=log_level, lifespan="off", **config))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        yield port
    finally:
        server.should_exit = True
        if closing is not None:
            await closing()
        await task
        sock.close()
