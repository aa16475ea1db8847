"""A ``tools/call`` result of the plain shape, written for the wire as the SDK's runner writes it, without its
two model passes.

The SDK shapes a handler's result (``ServerRunner._serialize``) by dumping the model, validating the dump
against the negotiated version's surface model and dumping that again (which drops the fields the version
does not know and puts the keys in the surface's order): two pydantic passes over every answer, done twice
per call on the gateway's lean path (the built-in's answer, then the front's). For the usual result (text
blocks only, an object of structured content, a ``_meta`` object of plain keys) the surface validation
cannot change a value, so what it gives is known beforehand: the same values, the version's fields, in the
surface's key order. Anything else (an image, annotations, a block's own ``_meta``, a ``resultType`` that is
not "complete" or is missing, the server-info key or a null at the top of ``_meta``, a key that is not text)
returns None and goes through the SDK. ``tests/gateway/test_plain_tool_result.py`` compares both, byte for
byte, over generated results in every version.
"""

from __future__ import annotations

from typing import Any

from mcp.types import CallToolResult
from mcp_types import SERVER_INFO_META_KEY
from mcp_types import methods as _methods

# the keys the SDK's CallToolResult dumps (by alias); the text block's
_RESULT_KEYS = frozenset(("_meta", "content", "structuredContent", "isError", "resultType"))
_TEXT_KEYS = frozenset(("type", "text"))


def _order(version: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The surface's key order for the result and for a text block, in ``version`` (None: not a plain
    surface: the SDK shapes it)."""
    try:
        surface = _methods.SERVER_RESULTS[("tools/call", version)]
    except KeyError:
        return None
    members: tuple[Any, ...] = getattr(surface, "__args__", (surface,))
    model: Any = next((m for m in members if getattr(m, "__name__", "") == "CallToolResult"), None)
    if model is None:
        return None
    keys = tuple(f.alias or n for n, f in model.model_fields.items())
    try:  # list[TextContent | ImageContent | ...]
        blocks: tuple[Any, ...] = model.model_fields["content"].annotation.__args__[0].__args__
    except (AttributeError, IndexError, KeyError):
        return None
    block: Any = next((m for m in blocks if getattr(m, "__name__", "") == "TextContent"), None)
    if block is None or not set(keys) <= _RESULT_KEYS:
        return None
    return keys, tuple(k for k in (f.alias or n for n, f in block.model_fields.items()) if k in _TEXT_KEYS)


_ORDERS: dict[str, tuple[tuple[str, ...], tuple[str, ...]] | None] = {}  # per version (a handful)


def plain_tool_result(result: Any, version: str) -> dict[str, Any] | None:
    """What ``ServerRunner._serialize("tools/call", version, result)`` gives before the server-info stamp, for
    a plain result; None for any other (the SDK shapes it)."""
    if type(result) is not CallToolResult:
        return None
    order = _ORDERS.get(version)
    if order is None:
        if version in _ORDERS or len(_ORDERS) > 64:
            return None
        order = _ORDERS[version] = _order(version)
        if order is None:
            return None
    keys, text_keys = order
    dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    if not dumped.keys() <= _RESULT_KEYS or dumped.get("resultType") != "complete":
        return None
    content = dumped.get("content")
    if type(content) is not list:
        return None
    blocks = []
    for b in content:
        if type(b) is not dict or b.keys() != _TEXT_KEYS or b["type"] != "text" or type(b["text"]) is not str:
            return None
        blocks.append({k: b[k] for k in text_keys})
    meta = dumped.get("_meta")
    if meta is not None and (
        type(meta) is not dict or SERVER_INFO_META_KEY in meta
        or any(type(k) is not str or v is None for k, v in meta.items())
    ):
        return None
    structured = dumped.get("structuredContent")
    if structured is not None and (
        type(structured) is not dict or any(type(k) is not str for k in structured)
    ):
        return None
    if "isError" in dumped and type(dumped["isError"]) is not bool:
        return None
    out: dict[str, Any] = {}
    for k in keys:
        if k == "content":
            out[k] = blocks
        elif k == "resultType":
            out[k] = "complete"
        elif k in dumped:
            out[k] = dumped[k]
    return out
