"""Method table shared by both bindings, and the ``A2A-Version`` rule.

Version rule (a deliberate choice): an explicit ``A2A-Version`` (header or query parameter) must have
major version 1, else -32009. A missing or empty value is taken as 1.0, not 0.3 as the spec says:
Sentinel implements no 0.3 binding, the TCK sends no header, and reading "absent" as 0.3 would turn
every such request into -32009 with no benefit. Replies carry ``A2A-Version: 1.0``.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel

from sentinel_mcp.a2a.jsonrpc import (
    EXTENDED_CARD_NOT_CONFIGURED,
    METHOD_NOT_FOUND,
    PUSH_NOT_SUPPORTED,
    UNSUPPORTED_OPERATION,
    VERSION_NOT_SUPPORTED,
    RpcError,
    parse_params,
)
from sentinel_mcp.a2a.protocol import (
    PROTOCOL_VERSION,
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    SendMessageRequest,
    SubscribeToTaskRequest,
)
from sentinel_mcp.a2a.service import A2AService
from sentinel_mcp.a2a.task_events import EventStream

VERSION_HEADER = "A2A-Version"

Handler = Callable[[Any, str], Awaitable[Any]]
StreamHandler = Callable[[Any, str], Awaitable[EventStream]]
Recheck = Callable[[], Any]  # the request's credentials, authenticated again (identity.resolver.RECHECK_KEY)


def check_version(value: str | None) -> None:
    if value is None or not value.strip():
        return
    major = value.strip().split(".")[0]
    if major != PROTOCOL_VERSION.split(".")[0]:
        raise RpcError(VERSION_NOT_SUPPORTED,
                       f"A2A version '{value}' is not supported; this agent speaks {PROTOCOL_VERSION}",
                       {"supportedVersions": PROTOCOL_VERSION})


def a2a_methods(
    service: A2AService, recheck: Recheck | None = None
) -> dict[str, tuple[type[BaseModel], Handler]]:
    """``recheck``: the request's credentials checked again (``RECHECK_KEY``): the task it starts keeps it."""
    return {
        "SendMessage": (SendMessageRequest, functools.partial(service.send_message, recheck=recheck)),
        "GetTask": (GetTaskRequest, service.get_task),
        "ListTasks": (ListTasksRequest, service.list_tasks),
        "CancelTask": (CancelTaskRequest, service.cancel_task),
    }


def stream_methods(
    service: A2AService, recheck: Recheck | None = None
) -> dict[str, tuple[type[BaseModel], StreamHandler]]:
    """Methods answered with a stream of StreamResponses (SSE over HTTP, ev/fin frames over WebSocket)."""
    return {
        "SendStreamingMessage": (SendMessageRequest,
                                 functools.partial(service.send_streaming_message, recheck=recheck)),
        "SubscribeToTask": (SubscribeToTaskRequest, service.subscribe_to_task),
    }


STREAM_METHODS = frozenset({"SendStreamingMessage", "SubscribeToTask"})


async def open_stream(service: A2AService, method: str, params: Any, caller: str,
                      recheck: Recheck | None = None) -> EventStream:
    """Validate and start a streaming method; its errors raise here, before any event is sent."""
    model, handler = stream_methods(service, recheck)[method]
    return await handler(parse_params(model, params), caller)


# A2A methods this agent knows but does not offer (its card says so): their own error codes.
_NOT_OFFERED: dict[str, RpcError] = {
    "CreateTaskPushNotificationConfig": RpcError(PUSH_NOT_SUPPORTED, "Push Notification is not supported"),
    "GetTaskPushNotificationConfig": RpcError(PUSH_NOT_SUPPORTED, "Push Notification is not supported"),
    "ListTaskPushNotificationConfigs": RpcError(PUSH_NOT_SUPPORTED, "Push Notification is not supported"),
    "DeleteTaskPushNotificationConfig": RpcError(PUSH_NOT_SUPPORTED, "Push Notification is not supported"),
    "GetExtendedAgentCard": RpcError(EXTENDED_CARD_NOT_CONFIGURED, "Extended agent card is not configured"),
}


async def dispatch(service: A2AService, method: str, params: Any, caller: str,
                   extra: dict[str, tuple[type[BaseModel], Handler]] | None = None,
                   recheck: Recheck | None = None) -> Any:
    table = a2a_methods(service, recheck) | (extra or {})
    entry = table.get(method)
    if entry is None and method in STREAM_METHODS:  # a caller that cannot take a stream
        raise RpcError(UNSUPPORTED_OPERATION, f"{method} streams its result; this caller takes one reply")
    if entry is None:
        if method in _NOT_OFFERED:
            raise _NOT_OFFERED[method]
        raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}", {"method": method[:100]})
    model, handler = entry
    return await handler(parse_params(model, params), caller)
