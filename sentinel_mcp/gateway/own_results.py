"""Results Sentinel writes itself (a refusal, a hold, an error): text for the model, details in ``_meta``.

Never in ``structuredContent``: when the tool declares an ``outputSchema``, SDK clients (the TypeScript one,
and so the Inspector, Claude Desktop, VS Code) validate ``structuredContent`` against it and throw, so the
user would never see why the call was held. ``_meta`` is free for vendor keys; ours all start ``sentinel/``.
"""

from __future__ import annotations

from typing import Any

from mcp.types import CallToolResult, TextContent

META_PREFIX = "sentinel/"


def sentinel_result(text: str, **info: Any) -> CallToolResult:
    """An ``isError`` result whose details live under ``_meta["sentinel/<key>"]``."""
    meta = {META_PREFIX + key: value for key, value in info.items() if value is not None}
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True, _meta=meta or None)


def sentinel_info(result: CallToolResult) -> dict[str, Any]:
    """What Sentinel said about a result (``{}`` when the result is the upstream's own)."""
    meta = result.meta or {}
    return {key.removeprefix(META_PREFIX): value for key, value in meta.items()
            if isinstance(key, str) and key.startswith(META_PREFIX)}
