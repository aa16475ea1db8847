"""A listed A2A agent over real HTTP on 127.0.0.1: it serves the card ``card(port)`` makes (none when that is
None: a 404) and answers each JSON-RPC message with a completed task, keeping what it was sent, so a test can
see that nothing left Sentinel."""

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
async def listed_agent(card: Callable[[int], dict[str, Any] | None]
                       ) -> AsyncIterator[tuple[int, list[dict[str, Any]]]]:
    got: list[dict[str, Any]] = []
    port = 0

    async def card_route(request: Request) -> Response:
        body = card(port)
        return Response(status_code=404) if body is None else JSONResponse(body)

    async def answer(request: Request) -> JSONResponse:
        body = await request.json()
        got.append({"authorization": request.headers.get("authorization"), "body": body})
        message = body.get("params", {}).get("message", {})
        task = {"id": "remote-task", "contextId": message.get("contextId") or "remote-context",
                "status": {"state": "TASK_STATE_COMPLETED",
                           "message": {"role": "ROLE_AGENT", "messageId": "m-1",
                                       "parts": [{"text": "done"}]}}}
        return JSONResponse({"jsonrpc": "2.0", "id": body.get("id"), "result": {"task": task}})

    def app_at(bound: int) -> Starlette:
        nonlocal port
        port = bound
        return Starlette(routes=[Route("/.well-known/agent-card.json", card_route),
                                 Route("/a2a", answer, methods=["POST"])])

    async with served_app(app_at, log_level="warning") as served:
        yield served, got
