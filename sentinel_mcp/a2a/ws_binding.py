"""The custom binding ``JSONRPC-WS`` at ``/a2a/ws``: JSON-RPC 2.0 frames over a WebSocket.

Follows Arkavo's WebSocket Binding v1 draft where it applies: subprotocol ``a2a.v1.json`` (text
frames; no offer means JSON; an offer without it is refused at the handshake), auth and
``A2A-Version`` on the upgrade request, one request -> one response under the same id, several
requests in flight per socket. Methods: the A2A core (SendMessage, GetTask, ListTasks, CancelTask)
with the same semantics and errors as HTTP, plus the design's ``sensor_request``, ``tool_call`` and
``chat_open`` (with ``chat_message``/``chat_close``). A peer that disconnects mid-task leaves its tasks
running; it can read them later with GetTask.

Streaming (``SendStreamingMessage``, ``SubscribeToTask``), the draft's ``req`` -> ``ev``* -> ``fin``:
each event is a JSON-RPC response frame under the request id whose result is a StreamResponse (as an
SSE ``data:`` line over HTTP) and which carries ``"frame": "ev"``; the last frame of that id carries
``"frame": "fin"`` and ``result: {"events": <count>}`` (or ``error`` when the stream failed midway).
An error before the first event is one plain error frame, as for unary calls. Streams on one socket
are multiplexed by id, each in order.

A connection takes one slot of ``stream_slots.py`` at the upgrade (a caller at its bound is refused there with
HTTP 429), which covers its first stream; each further stream open on it at the same time takes a slot of its
own (refused with the same error frame at the bound), so one caller's streams are bounded alike however many
sockets carry them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

from pydantic import BaseModel, StrictBool
from starlette.responses import JSONResponse
from starlette.websockets import WebSocket, WebSocketDisconnect

from sentinel_mcp.a2a.card import WS_SUBPROTOCOL
from sentinel_mcp.a2a.chat import ChatCloseParams, ChatHub, ChatMessageParams, ChatOpenParams
from sentinel_mcp.a2a.dispatch import STREAM_METHODS, Handler, check_version, dispatch, open_stream
from sentinel_mcp.a2a.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    RpcError,
    answer_id,
    decode_frame,
    error_frame,
    parse_request,
    result_frame,
)
from sentinel_mcp.a2a.jsonrpc_http import version_of
from sentinel_mcp.a2a.stream_slots import StreamSlot, TooManyStreams
from sentinel_mcp.a2a.messages import SensorRequest, ToolCall, typed
from sentinel_mcp.a2a.protocol import Id
from sentinel_mcp.a2a.security import AuthError, caller_identity, unauthorized
from sentinel_mcp.identity.resolver import RECHECK_KEY, AuthFailed
from sentinel_mcp.a2a.service import A2AService

log = logging.getLogger(__name__)


class _DesignCall(BaseModel):
    # the options a SendMessage carries, typed as it types them (protocol.py): an id of 1..MAX_ID characters
    # (an empty one made a Message that failed its own check: an internal error), a JSON boolean
    context_id: Id | None = None
    return_immediately: StrictBool = False


class SensorRequestParams(SensorRequest, _DesignCall):  # type: ignore[misc]
    pass


class ToolCallParams(ToolCall, _DesignCall):
    pass


class Connection:
    def __init__(self, ws: WebSocket, service: A2AService, caller: str) -> None:
        self.ws = ws
        self.service = service
        self.caller = caller
        # its turns run on after their frames: each call they make is sent only while the connection's
        # credentials hold (a token rotated while a turn waited for the LLM's slot: not sent)
        self.chat = ChatHub(service, ws.scope.get(RECHECK_KEY))
        self.send_lock = asyncio.Lock()
        self.slots = asyncio.Semaphore(service.settings.max_concurrent_per_socket)
        self.inflight: set[asyncio.Task[None]] = set()
        self.streams = 0  # streams open on this connection now
        self.extra: dict[str, tuple[type[BaseModel], Handler]] = {
            "sensor_request": (SensorRequestParams, self._sensor_request),
            "tool_call": (ToolCallParams, self._tool_call),
            "chat_open": (ChatOpenParams, self.chat.open),
            "chat_message": (ChatMessageParams, self.chat.say),
            "chat_close": (ChatCloseParams, self.chat.close),
        }

    async def _sensor_request(self, p: SensorRequestParams, caller: str) -> dict[str, Any]:
        stated = p.model_dump(mode="json", exclude=set(_DesignCall.model_fields), exclude_unset=True)
        SensorRequest.model_validate(stated)  # checked here, carried as stated: a default is the sensors' own
        data = {"type": "sensor_request", **stated}
        return await self.service.run_design_message(data, caller, p.context_id, p.return_immediately,
                                                     self.ws.scope.get(RECHECK_KEY))

    async def _tool_call(self, p: ToolCallParams, caller: str) -> dict[str, Any]:
        data = typed(
            "tool_call", ToolCall.model_validate(p.model_dump(exclude=set(_DesignCall.model_fields)))
        )
        return await self.service.run_design_message(data, caller, p.context_id, p.return_immediately,
                                                     self.ws.scope.get(RECHECK_KEY))

    async def send(self, frame: dict[str, Any]) -> None:
        async with self.send_lock:
            await self.ws.send_text(json.dumps(frame, separators=(",", ":")))

    async def handle_frame(self, raw: str) -> None:
        body: Any = None
        try:
            body = decode_frame(raw)
            rpc = parse_request(body)
        except RpcError as e:
            await self.send(error_frame(answer_id(body, e), e))
            return
        await self.slots.acquire()
        task = asyncio.create_task(self._answer(rpc.method, rpc.params, rpc.id, rpc.is_notification))
        self.inflight.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self.inflight.discard(task)
        self.slots.release()

    async def _answer(self, method: str, params: Any, rid: Any, notification: bool) -> None:
        if method in STREAM_METHODS and not notification:
            await self._stream(method, params, rid)
            return
        try:
            # a task started here runs on after the frame: it keeps the connection's credentials' check
            result = await dispatch(self.service, method, params, self.caller, extra=self.extra,
                                    recheck=self.ws.scope.get(RECHECK_KEY))
            frame = result_frame(rid, result)
        except RpcError as e:
            frame = error_frame(rid, e)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("A2A WebSocket request %s failed", method)
            frame = error_frame(rid, RpcError(INTERNAL_ERROR, "Internal error"))
        if notification:
            return
        try:
            await self.send(frame)
        except (WebSocketDisconnect, RuntimeError):
            pass  # the peer left; its tasks live on in the store

    async def _stream(self, method: str, params: Any, rid: Any) -> None:
        # the connection's own slot covers its first stream; each further stream open at once takes a slot of
        # its own, so a caller's streams are bounded alike however many sockets carry them
        extra: StreamSlot | None = None
        if self.streams:
            try:
                extra = self.service.stream_slots.take(self.caller)
            except TooManyStreams as e:
                await self._send_quietly(error_frame(rid, e))
                return
        self.streams += 1
        try:
            await self._stream_events(method, params, rid)
        finally:
            self.streams -= 1
            if extra is not None:
                extra.release()

    async def _stream_events(self, method: str, params: Any, rid: Any) -> None:
        try:
            stream = await open_stream(self.service, method, params, self.caller,
                                       self.ws.scope.get(RECHECK_KEY))
        except RpcError as e:
            await self._send_quietly(error_frame(rid, e))
            return
        except Exception:
            log.exception("A2A WebSocket stream %s failed to open", method)
            await self._send_quietly(error_frame(rid, RpcError(INTERNAL_ERROR, "Internal error")))
            return
        count = 0
        fin: dict[str, Any]
        refused: str | None = None
        try:
            async for event in stream.events():
                # each event is an answer to the caller: sent while the connection's credentials still name
                # it (a certificate revoked while the task streamed got the rest, its result included), as
                # an HTTP stream is checked (app/stream_recheck.py)
                refused = _no_longer(self.ws, self.caller)
                if refused is not None:
                    break
                await self.send({**result_frame(rid, event), "frame": "ev"})
                count += 1
            fin = (result_frame(rid, {"events": count}) if refused is None
                   else error_frame(rid, RpcError(INVALID_REQUEST, refused)))
        except (WebSocketDisconnect, RuntimeError):
            return  # the peer left mid-stream; the task runs on
        except Exception:
            log.exception("A2A WebSocket stream %s failed", method)
            fin = error_frame(rid, RpcError(INTERNAL_ERROR, "Internal error"))
        finally:
            stream.close()
        await self._send_quietly({**fin, "frame": "fin"})
        if refused is not None:
            with contextlib.suppress(WebSocketDisconnect, RuntimeError):
                await self.ws.close(code=1008, reason=refused[:120])

    async def _send_quietly(self, frame: dict[str, Any]) -> None:
        try:
            await self.send(frame)
        except (WebSocketDisconnect, RuntimeError):
            pass

    async def close(self) -> None:
        for task in list(self.inflight):
            task.cancel()
        if self.inflight:
            await asyncio.wait(self.inflight)
        self.chat.close_all()  # its chats' turns no longer count against the caller


async def _refuse(ws: WebSocket, response: Any) -> None:
    """Refuse the upgrade with an HTTP response when the server supports it (uvicorn does)."""
    if "websocket.http.response" in ws.scope.get("extensions", {}):
        await ws.send_denial_response(response)
    else:
        await ws.close(code=1008)


def _no_longer(ws: WebSocket, caller: str) -> str | None:
    """Why the credentials of the upgrade request no longer name ``caller`` (a client certificate that has
    expired, been revoked or lost its CA since), or None while they do. Every frame is a request: it is
    checked as a request on a kept-alive HTTP connection is."""
    recheck = ws.scope.get(RECHECK_KEY)
    if recheck is None:
        return None
    try:
        principal = recheck()
    except AuthFailed as e:
        return f"the credentials of this connection no longer hold: {e}"
    if getattr(principal, "name", None) != caller:
        return "the credentials of this connection name someone else now"
    return None


def make_ws_endpoint(service: A2AService):  # type: ignore[no-untyped-def]
    settings = service.settings

    async def serve(ws: WebSocket, caller: str, offered: list[str]) -> None:
        await ws.accept(subprotocol=WS_SUBPROTOCOL if offered else None)
        conn = Connection(ws, service, caller)
        try:
            check_version(version_of(ws.headers, ws.query_params))
        except RpcError as e:
            await conn.send(error_frame(None, e))
            await ws.close(code=1008, reason="A2A version not supported")
            return
        try:
            while True:
                msg = await ws.receive()
                if msg["type"] == "websocket.disconnect":
                    break
                text = msg.get("text")
                if text is None:
                    await conn.send(
                        error_frame(
                            None,
                            RpcError(
                                INVALID_REQUEST,
                                f"Invalid Request: binary frames are not accepted; use text frames "
                                f"({WS_SUBPROTOCOL})",
                            ),
                        )
                    )
                    continue
                if (
                    len(text) > settings.max_frame_bytes
                    or len(text.encode("utf-8", "surrogatepass")) > settings.max_frame_bytes
                ):
                    await conn.send(
                        error_frame(
                            None,
                            RpcError(
                                INVALID_REQUEST,
                                f"Invalid Request: frame larger than {settings.max_frame_bytes} bytes",
                            ),
                        )
                    )
                    continue
                refused = _no_longer(ws, caller)
                if refused is not None:
                    await conn.send(error_frame(None, RpcError(INVALID_REQUEST, refused)))
                    await ws.close(code=1008, reason=refused[:120])
                    break
                await conn.handle_frame(text)
        except WebSocketDisconnect:
            pass
        finally:
            await conn.close()

    async def a2a_ws(ws: WebSocket) -> None:
        try:
            caller = caller_identity(ws, settings)
        except AuthError as e:
            await _refuse(ws, unauthorized(settings, str(e)))
            return
        offered = list(ws.scope.get("subprotocols") or [])
        if offered and WS_SUBPROTOCOL not in offered:
            await _refuse(
                ws,
                JSONResponse(
                    {"error": "unsupported subprotocol", "supported": [WS_SUBPROTOCOL]}, status_code=400
                ),
            )
            return
        try:
            slot = service.stream_slots.take(caller)
        except TooManyStreams as e:
            await _refuse(ws, JSONResponse(error_frame(None, e), status_code=429))
            return
        try:
            await serve(ws, caller, offered)
        finally:  # the peer left, the server stopped, or serving failed: the connection is gone
            slot.release()

    return a2a_ws
