"""A2A v1.0 JSON-RPC over HTTP: ``POST /a2a``.

Errors are JSON-RPC error objects with HTTP 200 (as the reference SDK answers), except auth failures,
which are HTTP 401 with ``WWW-Authenticate`` before any JSON-RPC processing.

``SendStreamingMessage`` and ``SubscribeToTask`` answer ``text/event-stream``: each SSE ``data:`` line
is a JSON-RPC response whose result is a StreamResponse; the stream ends after a terminal or
interrupted state. Errors found before the first event (bad params, unknown task) are a plain JSON
error response, as the reference SDK does; a failure mid-stream is a last ``event: error`` line. A stream
takes a slot (``stream_slots.py``) before anything is started: a caller at its bound gets HTTP 429.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncGenerator
from typing import Any

from starlette.types import Receive, Scope, Send

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from sentinel_mcp.a2a.dispatch import (
    STREAM_METHODS,
    VERSION_HEADER,
    Recheck,
    check_version,
    dispatch,
    open_stream,
)
from sentinel_mcp.a2a.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    RpcError,
    answer_id,
    decode_frame,
    error_frame,
    id_of,
    parse_request,
    result_frame,
)
from sentinel_mcp.a2a.protocol import PROTOCOL_VERSION
from sentinel_mcp.a2a.security import AuthError, caller_identity, unauthorized
from sentinel_mcp.a2a.service import A2AService
from sentinel_mcp.a2a.stream_slots import StreamSlot, TooManyStreams
from sentinel_mcp.a2a.task_events import EventStream
from sentinel_mcp.core.errors import A2AError
from sentinel_mcp.core.held_bytes import HeldBytes
from sentinel_mcp.core.media_type import coding_refused, json_in_utf8
from sentinel_mcp.identity.resolver import RECHECK_KEY

log = logging.getLogger(__name__)
_HEADERS = {VERSION_HEADER: PROTOCOL_VERSION}


class BodyTooLarge(A2AError):
    pass


class BodiesHeld(A2AError):
    """Past the bytes of bodies one caller (or everyone) may have read or served at once: (status, why)."""

    def __init__(self, status: int, why: str) -> None:
        super().__init__(why)
        self.status = status


async def read_capped(request: Request, limit: int, held: HeldBytes | None = None, who: str = "") -> bytes:
    """The body, at most ``limit`` bytes; each chunk counted for ``who`` in ``held`` (the caller gives the
    count back, ``held.give_back(who, len(body))``, when the request ends; a refusal gives back at once)."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise BodyTooLarge
            refused = held.take(who, len(chunk)) if held is not None else None
            if refused is not None:
                size -= len(chunk)
                raise BodiesHeld(*refused)
            chunks.append(chunk)
    except BaseException:
        if held is not None:
            held.give_back(who, sum(len(c) for c in chunks))
        raise
    return b"".join(chunks)


def body_refusal(headers: list[tuple[bytes, bytes]]) -> str | None:
    """Why the body cannot be read as its head declares it (None: it can), by the MCP door's rule
    (``core/media_type.py``): Content-Type sent once, ``application/json`` in UTF-8 (a browser can POST
    text/plain or a form cross-site without asking first; JSON it cannot), and no content coding but
    ``identity``. The body is parsed as UTF-8 JSON as sent: a head saying ``charset=utf-16``, ``gzip`` or
    a second type describes another body than the one that would run."""
    types = [v for k, v in headers if k == b"content-type"]
    if not json_in_utf8(types):
        return ("Invalid Request: unsupported media type; send Content-Type: application/json (its only "
                "parameter charset=utf-8), once")
    if coding_refused([v for k, v in headers if k == b"content-encoding"]):
        return "Invalid Request: the body must be sent without a content coding (Content-Encoding)"
    return None


def version_of(request_headers: Any, query: Any) -> str | None:
    return request_headers.get(VERSION_HEADER) or query.get(VERSION_HEADER) or query.get("a2a-version")


def _sse(frame: dict[str, Any], event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return (head + "data: " + json.dumps(frame, separators=(",", ":")) + "\n\n").encode()


async def sse_lines(
    rid: Any, stream: EventStream, slot: StreamSlot | None = None
) -> AsyncGenerator[bytes, None]:
    """A client that goes away cancels this generator; the task itself runs on."""
    try:
        async for event in stream.events():
            yield _sse(result_frame(rid, event))
    except Exception:
        log.exception("A2A stream %s failed", rid)
        yield _sse(error_frame(rid, RpcError(INTERNAL_ERROR, "Internal error")), event="error")
    finally:
        stream.close()
        if slot is not None:  # before the response's last chunk: a client that saw the end may open another
            slot.release()


class SseResponse(StreamingResponse):
    """One stream's SSE response. Its subscription and slot are let go when the response ends however it
    does: a client gone before the body began has the generator cancelled before it ever ran, and a
    generator that never ran never runs its ``finally``."""

    def __init__(self, rid: Any, stream: EventStream, slot: StreamSlot) -> None:
        self._lines = sse_lines(rid, stream, slot)
        self._stream = stream
        self._slot = slot
        super().__init__(self._lines, media_type="text/event-stream",
                         headers={**_HEADERS, "Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._stream.close()
            self._slot.release()
            await self._lines.aclose()


async def open_sse(service: A2AService, method: str, rpc_id: Any, params: Any, caller: str,
                   notification: bool, recheck: Recheck | None = None) -> Response:
    """The slot first (TooManyStreams), then the stream: a refused SendStreamingMessage starts no task."""
    if notification:  # nobody to stream to, so no stream to count; the task runs on
        (await open_stream(service, method, params, caller, recheck)).close()
        return Response(status_code=204, headers=_HEADERS)
    slot = service.stream_slots.take(caller)
    try:
        stream = await open_stream(service, method, params, caller, recheck)
    except BaseException:
        slot.release()
        raise
    return SseResponse(rpc_id, stream, slot)


def make_endpoint(service: A2AService):  # type: ignore[no-untyped-def]
    settings = service.settings

    async def a2a_jsonrpc(request: Request) -> Response:
        try:
            caller = caller_identity(request, settings)
        except AuthError as e:
            return unauthorized(settings, str(e))
        # credentials that may lapse (a rotated token, a revoked certificate): a task this request starts
        # runs on after it, and its guarded calls are sent only while they still hold
        recheck = request.scope.get(RECHECK_KEY)
        refused = body_refusal(request.scope.get("headers") or [])
        if refused is not None:  # told by the head alone: the body is never read
            return JSONResponse(error_frame(None, RpcError(INVALID_REQUEST, refused)), status_code=415,
                                headers=_HEADERS)
        body: Any = None
        raw = b""
        try:
            raw = await read_capped(request, settings.max_frame_bytes, service.held_bodies, caller)
            body = decode_frame(raw)
            rpc = parse_request(body)
            check_version(version_of(request.headers, request.query_params))
            if rpc.method in STREAM_METHODS:
                return await open_sse(service, rpc.method, rpc.id, rpc.params, caller, rpc.is_notification,
                                      recheck)
            result = await dispatch(service, rpc.method, rpc.params, caller, recheck=recheck)
            if rpc.is_notification:
                return Response(status_code=204, headers=_HEADERS)
            return JSONResponse(result_frame(rpc.id, result), headers=_HEADERS)
        except BodyTooLarge:
            err = RpcError(
                INVALID_REQUEST, f"Invalid Request: payload larger than {settings.max_frame_bytes} bytes"
            )
            return JSONResponse(error_frame(None, err), headers=_HEADERS)
        except BodiesHeld as e:
            err = RpcError(INVALID_REQUEST, f"Invalid Request: {e}")
            return JSONResponse(error_frame(None, err), status_code=e.status, headers=_HEADERS)
        except TooManyStreams as e:
            return JSONResponse(error_frame(id_of(body), e), status_code=429, headers=_HEADERS)
        except RpcError as e:
            return JSONResponse(error_frame(answer_id(body, e), e), headers=_HEADERS)
        except ClientDisconnect:
            return Response(status_code=499)
        except Exception:  # never a traceback to the peer
            log.exception("A2A JSON-RPC request failed")
            return JSONResponse(
                error_frame(id_of(body), RpcError(INTERNAL_ERROR, "Internal error")), headers=_HEADERS
            )
        finally:
            service.held_bodies.give_back(caller, len(raw))  # read whole: held while it was served

    return a2a_jsonrpc
