"""How the example domain servers answer a tool call (tau2-bench's conventions, shared by every domain).

A result carries the value as JSON text (or the bare string) and as structured content: objects as they are,
lists and strings under ``result``. A failed API check is a tool error (``isError``) whose text is
``Error: <message>``.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel

READ = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
WRITE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)
# Hands the conversation over; changes no data, so it is neither read-only nor destructive.
HANDOFF = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


def plain(value: Any) -> Any:
    """tau2's JSON form of a tool's return value (pydantic models dumped, lists kept)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return value


def encode_result(value: Any) -> CallToolResult:
    """A tool result as tau2's text (JSON, or the bare string) plus structured content."""
    data = plain(value)
    text = data if isinstance(data, str) else json.dumps(data)
    structured = data if isinstance(data, dict) else {"result": data}
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


def encode_error(error: Exception) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=f"Error: {error}")], is_error=True)


def run_tool(errors: type[Exception], operation: Callable[..., Any], *args: Any) -> CallToolResult:
    """``operation(*args)`` as a tool result; a domain error (``errors``) as a tool error, anything else
    raises."""
    try:
        return encode_result(operation(*args))
    except errors as error:
        return encode_error(error)
