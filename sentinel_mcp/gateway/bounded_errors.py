"""The front's middleware that cuts every JSON-RPC error it answers: the message and the data an error
carries often quote the request (the SDK's "Method not found" carries the method name as its data, an
unknown prompt or resource its name or URI), and a request may be megabytes long. An error's message is cut
to ``MESSAGE_ECHO_LIMIT`` characters and each string in its data to ``ECHO_LIMIT``, whoever raised it (the
SDK, a handler, Sentinel's own code), so no list of the errors that quote is needed."""

from __future__ import annotations

from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError

from sentinel_mcp.core.echoed_text import ECHO_LIMIT, MESSAGE_ECHO_LIMIT, echoed

DATA_ITEMS = 20  # entries of a list or object kept in an error's data
DATA_DEPTH = 4


async def bounded_errors(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    try:
        return await call_next(ctx)
    except MCPError as e:
        error = e.error
        message, data = echoed(error.message, MESSAGE_ECHO_LIMIT), cut_data(error.data)
        if message == error.message and data == error.data:
            raise
        raise MCPError(code=error.code, message=message, data=data) from e


def cut_data(data: Any, depth: int = 0) -> Any:
    """An error's data with every string cut, at most ``DATA_ITEMS`` entries per list or object and
    ``DATA_DEPTH`` levels (deeper is left out)."""
    if isinstance(data, str):
        return echoed(data, ECHO_LIMIT) if len(data) > ECHO_LIMIT or not data.isprintable() else data
    if depth >= DATA_DEPTH and isinstance(data, (dict, list)):
        return None
    if isinstance(data, dict):
        return {cut_data(str(k)): cut_data(v, depth + 1) for k, v in list(data.items())[:DATA_ITEMS]}
    if isinstance(data, list):
        return [cut_data(v, depth + 1) for v in data[:DATA_ITEMS]]
    return data
