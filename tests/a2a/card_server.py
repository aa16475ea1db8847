"""An agent card served over real HTTP on 127.0.0.1 (uvicorn), for the discovery tests: ``card(port)`` is the
card's JSON (an object, or the bytes of a text as a hostile peer would write it), told the port it is served
on so it can name (or not name) where it is reached."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from tests.support.served_app import served_app


@contextlib.asynccontextmanager
async def serving_card(card: Callable[[int], dict[str, Any] | bytes]) -> AsyncIterator[int]:
    async def answer(request: Request) -> Response:
        body = card(port)
        if isinstance(body, bytes):
            return Response(body, media_type="application/json")
        return JSONResponse(body)

    port = 0  # told by served_app before the first request

    def app_at(bound: int) -> Starlette:
        nonlocal port
        port = bound
        return Starlette(routes=[Route("/.well-known/agent-card.json", answer)])

    async with served_app(app_at, log_level="warning") as served:
        yield served


@contextlib.asynccontextmanager
async def serving_cards(count: int,
                        card: Callable[[int], dict[str, Any] | bytes]) -> AsyncIterator[list[int]]:
    """``count`` card servers (one address is listed under a few names at most: a full list takes many)."""
    async with contextlib.AsyncExitStack() as stack:
        yield [await stack.enter_async_context(serving_card(card)) for _ in range(count)]
