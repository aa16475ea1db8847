"""The edge of the HTTP app: nothing a request does escapes to uvicorn, and an error answer on a JSON-RPC
door (``json_rpc_doors.py``) is a JSON-RPC error.

An exception that leaves the app reached uvicorn's "Exception in ASGI application" handler: a whole traceback
in the log for each request that found the fault (the values it carried among the frames), and a plain-text
500 to the caller. Here it is caught (``Exception``: a cancellation still ends the request as it should), one
bounded line is logged, and the caller answered: a JSON-RPC internal error (500, the request's id when it was
parsed) when nothing was sent yet; when an answer had begun, its connection is closed, as uvicorn closes it,
so that what was sent is not taken for a whole answer.

An error answer on a JSON-RPC door that is not JSON-RPC (Starlette's 405 in plain text, a refusal some layer
spelled its own way) is rewritten as one at the same status, its other headers (``WWW-Authenticate``) kept;
so is one on the legacy ``/sse`` stream, whose client reads JSON-RPC too.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import traceback
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sentinel_mcp.app.json_rpc_doors import json_rpc_client_route, refusal_body, request_id
from sentinel_mcp.app.lean_calls import HEAD_HOLDER_KEY
from sentinel_mcp.core.display_text import safe_text
from sentinel_mcp.gateway.wire_guard import MAX_ERROR_BYTES, as_json_rpc_error

log = logging.getLogger(__name__)
INTERNAL_ERROR = -32603
MAX_REFUSAL_CHARS = 500  # of an upgrade refusal's reason
LOGGED_CHARS = 200  # of a failure's text, and of the path, in its one log line
PLAIN_500 = b"Internal Server Error"
NO_SOCKET = "no WebSocket is served at this path"
FAULT = "HTTP app fault:"  # how each line begins (the fuzz hunts look for it: tests/records/fuzz_doors.py)


class AppBoundary:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            door = json_rpc_client_route(scope["path"])
            if door and (scope["method"] != "POST" or scope["path"] == "/sse"):
                return await self._door(scope, receive, send)
            # no send of its own (the hot path: a POST's error answers at a door are JSON-RPC where they are
            # made, WireGuard's included); after a fault, uvicorn's send says whether an answer had begun
            try:
                return await self.app(scope, receive, send)
            except Exception as e:  # noqa: BLE001 - the boundary: whatever it is, the caller is answered
                _log_failure(scope, e)
                return await _after_fault(scope, send, door)
        if kind == "websocket":
            return await self._websocket(scope, receive, send)
        await self.app(scope, receive, send)  # the lifespan: its failure is start-up's to report

    async def _door(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Another method at a JSON-RPC door (GET, DELETE, one the door does not take): its error answer in
        another shape (Starlette's 405, the SDK's GET refusals) is rewritten as JSON-RPC."""
        started = complete = False
        held: Message | None = None  # an error answer's start, held until its body is read
        body = bytearray()

        async def release() -> None:
            nonlocal held, complete
            start, held, complete = held, None, True
            assert start is not None
            text = as_json_rpc_error(bytes(body), request_id(scope), start.get("status", 400))
            headers = [(k, v) for k, v in start.get("headers", [])
                       if k.lower() not in (b"content-type", b"content-length")]
            headers += [(b"content-type", b"application/json"), (b"content-length", str(len(text)).encode())]
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": text})

        async def sending(message: Message) -> None:
            nonlocal started, complete, held
            kind = message["type"]
            if kind == "http.response.body":
                if held is not None:
                    body.extend(message.get("body", b""))
                    if not message.get("more_body", False) or len(body) > MAX_ERROR_BYTES:
                        await release()
                    return
                if complete:
                    return  # the rest of an error answer cut at its bound
                if not message.get("more_body", False):
                    complete = True
            elif kind == "http.response.start":
                started = True
                if message.get("status", 200) >= 400:
                    held = message
                    return
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception as e:  # noqa: BLE001 - the boundary
            _log_failure(scope, e)
            with contextlib.suppress(Exception):  # the connection may be gone already
                if held is not None:
                    await release()
                elif not started:
                    await _internal_error(scope, send, True)
                elif not complete:
                    await _cut(scope)

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        closed = accepted = False

        async def sending(message: Message) -> None:
            nonlocal closed, accepted
            kind = message["type"]
            if kind == "websocket.accept":
                accepted = True
            elif kind == "websocket.close" and not accepted and not closed:
                # a refusal before the handshake: uvicorn's bare 403 told the client nothing
                closed = True
                code = message.get("code", 1000)
                status = code - 4000 if 4400 <= code < 4600 else 403
                return await refuse_upgrade(scope, send, status, str(message.get("reason") or NO_SOCKET))
            if kind in ("websocket.close", "websocket.http.response.start"):
                closed = True
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception as e:  # noqa: BLE001 - the boundary
            _log_failure(scope, e)
            if not closed:
                with contextlib.suppress(Exception):
                    if accepted:
                        await send({"type": "websocket.close", "code": 1011, "reason": "internal error"})
                    else:
                        await refuse_upgrade(scope, send, 500, "Internal error")


async def refuse_upgrade(scope: Scope, send: Send, status: int, message: str,
                         extra: list[tuple[bytes, bytes]] | None = None) -> None:
    """Refuse a WebSocket upgrade with an HTTP answer whose body says why, in the shape of a plain request's
    refusal at that path (JSON-RPC on a door); a server without the denial extension gets a close."""
    text = safe_text(message, MAX_REFUSAL_CHARS)
    if "websocket.http.response" not in scope.get("extensions", {}):
        await send({"type": "websocket.close", "code": 4000 + status % 1000, "reason": text[:120]})
        return
    door = json_rpc_client_route(scope.get("path", ""))
    body = refusal_body(text) if door else json.dumps({"error": text}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               *(extra or [])]
    await send({"type": "websocket.http.response.start", "status": status, "headers": headers})
    await send({"type": "websocket.http.response.body", "body": body})


async def _internal_error(scope: Scope, send: Send, door: bool) -> None:
    if door:
        text, kind = refusal_body("Internal error", request_id(scope), INTERNAL_ERROR), b"application/json"
    else:
        text, kind = PLAIN_500, b"text/plain; charset=utf-8"
    await send({"type": "http.response.start", "status": 500, "headers": [
        (b"content-type", kind), (b"content-length", str(len(text)).encode()), (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": text})


async def _after_fault(scope: Scope, send: Send, door: bool) -> None:
    """The internal error when no answer had begun; uvicorn refuses a second start (RuntimeError) when one
    had: its connection is cut then. (A client gone: uvicorn's send takes anything and drops it.)"""
    try:
        await _internal_error(scope, send, door)
    except Exception:  # noqa: BLE001 - an answer had begun (or ended): what was sent is not taken for whole
        with contextlib.suppress(Exception):
            await _cut(scope)


async def _cut(scope: Scope) -> None:
    """An answer begun and not finished: its connection is closed (a client reading it to its length or its
    last chunk sees it cut). uvicorn, finding the connection gone, then says nothing more of it."""
    transport: Any = scope.get(HEAD_HOLDER_KEY)
    if transport is None:
        return  # not served by the front's protocol: uvicorn closes it, saying the answer was not finished
    transport.close()
    for _ in range(3):  # its connection_lost is the loop's next turn (the TLS layer's, a turn or two more)
        await asyncio.sleep(0)


def _log_failure(scope: Scope, e: Exception) -> None:
    """One line: the request, the fault (the first of a group's, innermost) and where it was raised; no
    traceback, no frame's values."""
    leaf: BaseException = e
    while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:
        leaf = leaf.exceptions[0]
    try:
        text = str(leaf)
    except Exception:  # noqa: BLE001 - an exception whose own text fails: its type is said
        text = ""
    where = ""
    frames = traceback.extract_tb(leaf.__traceback__ or e.__traceback__)
    if frames:
        last = frames[-1]
        where = f" at {os.path.basename(last.filename)}:{last.lineno} in {last.name}"
    log.error("%s %s %s: %s%s: %s%s", FAULT, safe_text(str(scope.get("method", "WEBSOCKET")), 16),
              safe_text(str(scope.get("path", "")), LOGGED_CHARS),
              "" if leaf is e else type(e).__name__ + " of ", type(leaf).__name__,
              safe_text(text, LOGGED_CHARS), where)
