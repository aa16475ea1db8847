"""A raw TCP server on 127.0.0.1 for tests that play a hostile peer or a local service byte by byte."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any


@contextlib.asynccontextmanager
async def listening(handler: Any) -> AsyncIterator[Any]:
    """Serve ``handler.handle(reader, writer)`` on a free port; ``handler.port`` is set to it."""
    server = await asyncio.start_server(handler.handle, "127.0.0.1", 0)
    handler.port = server.sockets[0].getsockname()[1]
    try:
        yield handler
    finally:
        server.close()


class Counting:
    """A local service that counts who connected and answers nothing: what a fetch Sentinel must not make
    would reach."""

    def __init__(self) -> None:
        self.port = 0
        self.connections = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        writer.close()
