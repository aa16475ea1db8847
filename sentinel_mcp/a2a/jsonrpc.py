"""JSON-RPC 2.0 framing and the A2A error codes, shared by the HTTP and WebSocket bindings.

Errors carry a ``google.rpc.ErrorInfo`` detail in ``data`` (domain ``a2a-protocol.org``), as the
reference SDK sends them, so clients can map them back to typed errors.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from sentinel_mcp.core import wire_limits
from sentinel_mcp.core.errors import A2AError
from sentinel_mcp.core.stored_text import lone_surrogate

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
TASK_NOT_FOUND = -32001
TASK_NOT_CANCELABLE = -32002
PUSH_NOT_SUPPORTED = -32003
UNSUPPORTED_OPERATION = -32004
CONTENT_TYPE_NOT_SUPPORTED = -32005
EXTENDED_CARD_NOT_CONFIGURED = -32007
VERSION_NOT_SUPPORTED = -32009

_REASONS = {
    PARSE_ERROR: "PARSE_ERROR",
    INVALID_REQUEST: "INVALID_REQUEST",
    METHOD_NOT_FOUND: "METHOD_NOT_FOUND",
    INVALID_PARAMS: "INVALID_PARAMS",
    INTERNAL_ERROR: "INTERNAL",
    TASK_NOT_FOUND: "TASK_NOT_FOUND",
    TASK_NOT_CANCELABLE: "TASK_NOT_CANCELABLE",
    PUSH_NOT_SUPPORTED: "PUSH_NOTIFICATION_NOT_SUPPORTED",
    UNSUPPORTED_OPERATION: "UNSUPPORTED_OPERATION",
    CONTENT_TYPE_NOT_SUPPORTED: "CONTENT_TYPE_NOT_SUPPORTED",
    EXTENDED_CARD_NOT_CONFIGURED: "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
    VERSION_NOT_SUPPORTED: "VERSION_NOT_SUPPORTED",
}

JsonId = str | int | None
M = TypeVar("M", bound=BaseModel)


class RpcError(A2AError):
    """An error that becomes a JSON-RPC error object."""

    def __init__(self, code: int, message: str, metadata: dict[str, Any] | None = None,
                 request_id: JsonId = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.metadata = metadata or {}
        self.request_id = request_id  # a frame refused as it was read: its id, when that could be read once

    def to_error(self) -> dict[str, Any]:
        info = {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": _REASONS.get(self.code, "UNKNOWN_ERROR"),
            "domain": "a2a-protocol.org",
            # ErrorInfo metadata is map<string,string>
            "metadata": {
                k: _cut(v if isinstance(v, str) else json.dumps(v)) for k, v in self.metadata.items()
            },
        }
        return {"code": self.code, "message": _cut(self.message), "data": [info]}


# An error names what was wrong, often by quoting the caller (a method, a type, a field name): quoted whole, a
# megabyte sent came back as one (or two, message and metadata). Cut to what a reader needs.
MAX_ERROR_TEXT = 2000


def _cut(text: str) -> str:
    return text if len(text) <= MAX_ERROR_TEXT else text[:MAX_ERROR_TEXT] + f"… ({len(text)} characters)"


def task_not_found(task_id: str) -> RpcError:
    return RpcError(TASK_NOT_FOUND, f"Task {task_id} not found", {"taskId": task_id})


def invalid_params_from(e: ValidationError, prefix: str = "params") -> RpcError:
    """A pydantic error as -32602 with every field path and reason, and nothing of the input echoed back."""
    problems = []
    for err in e.errors(include_url=False, include_input=False):
        where = ".".join(str(p) for p in (prefix, *err["loc"]))
        problems.append(f"{where}: {err['msg']}")
    return RpcError(
        INVALID_PARAMS, "Invalid params: " + "; ".join(problems[:10]), {"violations": problems[:10]}
    )


# an item's place: its key or index, and its parent's place
_Link = tuple[str, "_Link"] | None


def unpaired_surrogate_at(value: Any, prefix: str = "params") -> str | None:
    """Where ``value`` holds a string (a value or an object's key) with a lone UTF-16 surrogate, if it does.

    JSON may spell one (``"\\ud800"``) and the parser keeps it, but it is no Unicode text: a task is kept and
    served as UTF-8 JSON, which cannot encode it (a task holding one failed its store's size count, -32603).
    Told by encoding the whole value once; only a value that fails is walked (iteratively, each item naming
    its parent, so no path is built but the one returned: a path per item, of keys up to a frame long, cost
    gigabytes)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
        return None
    except UnicodeEncodeError:
        pass
    stack: list[tuple[Any, _Link]] = [(value, (prefix, None))]
    while stack:
        v, at = stack.pop()
        if isinstance(v, str):
            if lone_surrogate(v):
                return _path(at)
        elif isinstance(v, dict):
            for k, item in v.items():
                if isinstance(k, str) and lone_surrogate(k):
                    return _path(at) + " (a key)"
                stack.append((item, (str(k), at)))
        elif isinstance(v, list):
            stack.extend((item, (str(i), at)) for i, item in enumerate(v))
    return None


def _path(at: _Link) -> str:
    names: list[str] = []
    while at is not None:
        name, at = at
        names.append(name if len(name) <= 100 else name[:100] + "…")
    return ".".join(reversed(names))


def parse_params(model: type[M], params: Any) -> M:
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "Invalid params: params must be an object")
    where = unpaired_surrogate_at(params)
    if where is not None:  # (the path is made of the caller's keys, which are text: a bad key is named above)
        raise RpcError(INVALID_PARAMS, f"Invalid params: {where} holds a lone surrogate (not valid Unicode)")
    try:
        # strictly, whatever the model's own config: a caller's JSON types are what it means (the design
        # calls and chat methods are read here too)
        return model.model_validate(params, strict=True)
    except ValidationError as e:
        raise invalid_params_from(e) from None


@dataclass
class RpcRequest:
    method: str
    params: Any
    id: JsonId
    is_notification: bool


def decode_frame(raw: bytes | str) -> Any:
    """JSON under the gateway's wire limits (depth, integer size, finite numbers, valid Unicode)."""
    try:
        body = wire_limits.loads(raw)
        wire_limits.check_echoed_text(body)
        return body
    except wire_limits.WireError as e:
        raise RpcError(e.code, e.message, request_id=e.id) from None


def answer_id(body: Any, error: RpcError) -> JsonId:
    """The id an error answers: the body's, or, for a frame refused as it was read (no body), the id the
    wire's reader could read once (a name given twice elsewhere in it)."""
    return id_of(body) if body is not None else error.request_id


def id_of(body: Any) -> JsonId:
    """The request id to echo in an error, if the body has a usable one (``wire_limits.valid_id``)."""
    if isinstance(body, dict):
        rid: JsonId = wire_limits.valid_id(body.get("id"))
        return rid
    return None


def parse_request(body: Any) -> RpcRequest:
    """Validate the JSON-RPC 2.0 envelope (-32600 on any violation)."""
    if isinstance(body, list):
        raise RpcError(INVALID_REQUEST, "Invalid Request: batch requests are not supported")
    if not isinstance(body, dict):
        raise RpcError(INVALID_REQUEST, "Invalid Request: expected a JSON object")
    if body.get("jsonrpc") != "2.0":
        raise RpcError(INVALID_REQUEST, "Invalid Request: 'jsonrpc' must be exactly \"2.0\"")
    method = body.get("method")
    if not isinstance(method, str) or not method:
        raise RpcError(INVALID_REQUEST, "Invalid Request: 'method' must be a non-empty string")
    has_id = "id" in body
    rid = body.get("id")
    # every answer echoes the id, a stream in each of its events: held to the MCP front's rule
    # (wire_limits.valid_id: at most 1,000 characters, an integer of at most 2**53 - 1 either way)
    if has_id and rid is not None and wire_limits.valid_id(rid) is None:
        raise RpcError(
            INVALID_REQUEST,
            "Invalid Request: 'id' must be a string (at most 1000 characters), an integer (at most 2**53 - 1 "
            "either way) or null",
        )
    params = body.get("params")
    if params is not None and not isinstance(params, (dict, list)):
        raise RpcError(INVALID_REQUEST, "Invalid Request: 'params' must be an object or an array")
    return RpcRequest(method=method, params=params, id=rid, is_notification=not has_id)


def result_frame(rid: JsonId, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def error_frame(rid: JsonId, err: RpcError) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": err.to_error()}
