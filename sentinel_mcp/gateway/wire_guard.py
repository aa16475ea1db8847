"""ASGI middleware: every JSON-RPC message POSTed to /mcp or /messages/ meets ``wire_limits`` first, and
declares JSON in UTF-8 (``media_type.py``; 415 otherwise, the body unread).

The SDK's HTTP transports drop some malformed messages without an answer (an id that is an object, NaN
or 1e400) or answer in plain text. Here such a message gets a JSON-RPC error (HTTP 400) before the SDK
sees it; a valid one is handed on with its body replayed.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable
from typing import Any

import mcp_types as types
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sentinel_mcp.core.wire_limits import INVALID_REQUEST, MAX_MESSAGE_BYTES, WireError, parse_message
from sentinel_mcp.gateway.held_bodies import HeldBodies
from sentinel_mcp.gateway.initialize_params import initialize_refusal
from sentinel_mcp.core.media_type import CANONICAL, REFUSAL, identity_coding, json_in_utf8
from sentinel_mcp.identity.resolver import SCOPE_KEY


class WireGuard:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.bodies = HeldBodies()  # what the requests' bodies hold, per principal (held_bodies.py)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST" or not _guarded(scope.get("path", "")):
            return await self.app(scope, receive, send)
        if not _declares_json(scope):
            return await _answer(send, WireError(INVALID_REQUEST, REFUSAL), 415)
        refused_head = _framing_refusal(scope.get("headers") or [])
        if refused_head is not None:  # told by the head alone: the body is never waited for
            return await _answer(send, WireError(INVALID_REQUEST, refused_head[1]), refused_head[0])
        who = str(getattr(scope.get(SCOPE_KEY), "name", ""))
        held = 0  # bytes counted for this request, given back when it ends
        try:
            body = bytearray()
            more = True
            while more:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return
                chunk = message.get("body", b"")
                refused = self.bodies.take(who, len(chunk))
                if refused is not None:
                    return await _answer(send, WireError(INVALID_REQUEST, f"Invalid Request: {refused[1]}"),
                                         refused[0])
                held += len(chunk)
                body += chunk
                more = message.get("more_body", False)
                if len(body) > MAX_MESSAGE_BYTES:
                    return await _answer(send, WireError(
                        INVALID_REQUEST, f"Invalid Request: message larger than {MAX_MESSAGE_BYTES} bytes"))
            raw = bytes(body)
            del body  # held once, as ``raw``
            await self._checked(scope, receive, send, raw)
        finally:
            self.bodies.give_back(who, held)

    def _checked(self, scope: Scope, receive: Receive, send: Send, raw: bytes) -> Awaitable[None]:
        # what the caller awaits: the inner app's awaitable or the refusal's, not a coroutine of this
        # method's that each resumption of the request's task would run through (issue 21)
        try:
            msg = parse_message(raw)
            # the SDK parses the raw body again, with its own parser (stricter on lone surrogates): the same
            # check, asked only when its answer is not already known
            if not sdk_accepts(msg, raw):
                types.jsonrpc_message_adapter.validate_json(raw, by_name=False)
        except WireError as e:
            return _answer(send, e)
        except ValueError as e:
            mid = msg.get("id") if "method" in msg else None
            return _answer(send, WireError(INVALID_REQUEST, f"Invalid Request: {str(e)[:300]}", mid))
        if msg.get("method") == "initialize":  # refused before the SDK opens a session for it
            refused = initialize_refusal(msg)
            if refused is not None:
                return _answer(send, refused)

        scope["sentinel.message"] = msg  # parsed once: the lean path (app/lean_calls.py) reads it here
        replayed = False
        mid = msg.get("id") if isinstance(msg, dict) and "method" in msg else None

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": raw, "more_body": False}
            return await receive()

        return self.app(scope, replay, _json_rpc_errors(send, mid))


def _json_rpc_errors(send: Send, mid: Any) -> Send:
    """``send`` for a message's answer: an error answer that is not a JSON-RPC error (the SDK's transports
    answer a wrong Content-Type or Accept in plain text or with no body at all, a session check with a plain
    object) is sent as one, with the message's id and the same status, so every malformed message gets a
    JSON-RPC error. Anything else passes as it is."""
    held: dict[str, Any] | None = None
    body = bytearray()
    answered = False  # the error went out whole: what the app still sends of it is dropped

    async def sending(message: Message) -> None:
        nonlocal held, answered
        if message["type"] == "http.response.start" and message.get("status", 200) >= 400:
            held = dict(message)
            return
        if answered and message["type"] == "http.response.body":
            return
        if held is None or message["type"] != "http.response.body":
            return await send(message)
        body.extend(message.get("body", b""))
        if message.get("more_body", False) and len(body) <= MAX_ERROR_BYTES:
            return
        text = as_json_rpc_error(bytes(body), mid, held.get("status", 400))
        headers = [(k, v) for k, v in held.get("headers", [])
                   if k.lower() not in (b"content-type", b"content-length")]
        headers += [(b"content-type", b"application/json"), (b"content-length", str(len(text)).encode())]
        start, held, answered = {**held, "headers": headers}, None, True
        await send(start)
        await send({"type": "http.response.body", "body": text})

    return sending


MAX_ERROR_BYTES = 64 * 1024  # an error answer longer than this is cut (it is read whole before it is sent)


def as_json_rpc_error(body: bytes, mid: Any, status: int) -> bytes:
    try:
        found = json.loads(body) if body else None
    except ValueError:
        found = None
    if isinstance(found, dict) and found.get("jsonrpc") == "2.0" and isinstance(found.get("error"), dict):
        return body
    if isinstance(found, dict) and isinstance(found.get("error"), str):
        text = found["error"]
    else:
        text = body.decode("utf-8", "replace").strip() or _PHRASES.get(status, f"HTTP {status}")
    return json.dumps({"jsonrpc": "2.0", "id": mid, "error": {"code": INVALID_REQUEST, "message": text[:300]}}
                      ).encode()


_PHRASES = {400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 406: "Not Acceptable",
            415: "Unsupported Media Type", 413: "Payload Too Large"}


def sdk_accepts(message: dict[str, Any], raw: bytes) -> bool:
    """Whether the SDK's parse of ``raw`` (``jsonrpc_message_adapter``) is sure to accept what
    ``parse_message`` accepted: a request or notification (``jsonrpc`` "2.0", an integer or string id, a
    string method: what ``check_envelope`` holds) whose params are an object or absent, in a body with no
    ``\\u`` escape. Its parser then differs from Python's in nothing that matters here: the one text it
    refuses and Python's takes is an escaped lone surrogate (a name given twice, and numbers past the wire
    limits, were refused already). Anything else (a response, params of another type, any
    escape) is still put to the SDK's parser (``tests/gateway/test_wire_parse_once.py``)."""
    return "method" in message and type(message.get("params", {})) is dict and b"\\u" not in raw


def _declares_json(scope: Scope) -> bool:
    """The request's Content-Type declares JSON in UTF-8; when spelled otherwise than ``CANONICAL``, the
    scope's header is rewritten to it (the SDK's check behind is a case-sensitive one of its own)."""
    headers = scope.get("headers") or []
    values = [v for k, v in headers if k == b"content-type"]
    if not json_in_utf8(values):
        return False
    if values[0] != CANONICAL:
        scope["headers"] = [(k, CANONICAL if k == b"content-type" else v) for k, v in headers]
    return True


MAX_LENGTH_DIGITS = len(str(MAX_MESSAGE_BYTES))


def _framing_refusal(headers: list[tuple[bytes, bytes]]) -> tuple[int, str] | None:
    """(status, message) when the head alone says the body cannot be taken: a declared length past the
    message bound (413, at once: the body was awaited to its deadline, to be refused anyway), or a content
    coding other than ``identity`` (415: an allow list; a gzip-declared body was read as plain JSON, so what
    ran was not what a reader honouring the header sees). Content-Length's syntax is the HTTP parser's."""
    codings = 0
    for name, v in headers:  # one pass, every POST pays it (names come lower-cased, as ASGI has them)
        if name == b"content-encoding":
            codings += 1
            if codings > 1 or not identity_coding(v):
                return 415, ("Invalid Request: the body must be sent without a content coding "
                             "(Content-Encoding)")
        elif name == b"content-length":
            digits = v.strip()  # told by its digits' count first: int() of thousands of them is refused
            if digits.isdigit() and (len(digits) > MAX_LENGTH_DIGITS or int(digits) > MAX_MESSAGE_BYTES):
                return 413, f"Invalid Request: message larger than {MAX_MESSAGE_BYTES} bytes"
    return None


def _guarded(path: str) -> bool:
    return path == "/mcp" or path.startswith("/messages/") or path == "/messages"


async def _answer(send: Send, error: WireError, status: int = 400) -> None:
    body = json.dumps(error.response()).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})
