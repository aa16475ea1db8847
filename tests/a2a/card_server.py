"""An agent card served over real HTTP on 127.0.0.1 (uvicorn), for the discovery tests: ``card(port)`` is the
card's JSON, told the port it is served on so it can name (or not name) where it is reached."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Callable
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


@contextlib.asynccontextmanager
async def serving_card(card: Callable[[int], dict[str, Any]]) -> AsyncIterator[int]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]

    async def answer(request: Request) -> JSONResponse:
        return JSONResponse(card(port))

    server = uvicorn.Server(uvicorn.Config(Starlette(routes=[Route("/.well-known/agent-card.json", answer)]),
                                           log_level="warning", lifespan="off"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        yield port
    finally:
        server.should_exit = True
        await task
