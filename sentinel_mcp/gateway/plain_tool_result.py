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

from mcp.types import CallToolResult, TextContent
from mcp_types import SERVER_INFO_META_KEY
from mcp_types import methods as _methods

from sentinel_mcp.core.utf8_text import utf8_writable

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


def _order_of(version: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    order = _ORDERS.get(version)
    if order is None:
        if version in _ORDERS or len(_ORDERS) > 64:
            return None
        order = _ORDERS[version] = _order(version)
    return order


def plain_tool_result(result: Any, version: str) -> dict[str, Any] | None:
    """What ``ServerRunner._serialize("tools/call", version, result)`` gives before the server-info stamp, for
    a plain result; None for any other (the SDK shapes it)."""
    if type(result) is not CallToolResult:
        return None
    order = _ORDERS.get(version) or _order_of(version)  # the dict's answer first: a call fewer per result
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
    if meta is not None:
        if type(meta) is not dict or SERVER_INFO_META_KEY in meta:
            return None
        for k, v in meta.items():  # a loop, not ``any`` over a generator (a resumption a key, every call)
            if type(k) is not str or v is None:
                return None
    structured = dumped.get("structuredContent")
    if structured is not None:
        if type(structured) is not dict:
            return None
        for k in structured:
            if type(k) is not str:
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


# the values a JSON dump keeps as they are (the same type and value back from validation); text too when it
# is valid Unicode (a lone surrogate in a key is dumped as U+FFFD)
_SCALARS = (int, bool)
_WALK_BOUND = 256  # values of a result's structured content or _meta walked here; a larger one round-trips




def _json_exact(value: Any) -> bool:
    """Whether ``value`` is JSON-shaped with exact types (dicts of text keys, lists, text, numbers, booleans,
    null; finite floats), at most ``_WALK_BOUND`` values: its JSON dump is an equal copy of it."""
    stack, seen = [value], 0
    while stack:
        v = stack.pop()
        seen += 1
        if seen > _WALK_BOUND:
            return False
        t = type(v)
        if t in _SCALARS or v is None:
            continue
        if t is str:
            if not utf8_writable(v):
                return False
        elif t is float:
            if v - v != 0.0:  # inf or nan: dumped as null
                return False
        elif t is dict:
            if any(type(k) is not str or not utf8_writable(k) for k in v):
                return False
            stack.extend(v.values())
        elif t is list:
            stack.extend(v)
        else:  # a tuple, a set, a model, a str or dict subclass...: the dump changes its type
            return False
    return True


def same_after_round_trip(result: Any, plain: dict[str, Any]) -> bool:
    """Whether validating ``plain`` (``plain_tool_result(result, version)``, unstamped) as a
    ``CallToolResult`` gives back a model equal to ``result``, field for field: then the built-ins' direct
    path hands ``result`` on instead of validating its dump (``builtin_direct.py``). Text blocks of the exact
    class, nothing the version dropped, and structured content and ``_meta`` that are JSON values already
    (as their dump)."""
    content = result.content
    if type(content) is not list:
        return False
    for b in content:  # a loop, not any() over a generator: a step fewer per block on every call
        if type(b) is not TextContent:  # a dict a model_copy put here is dumped as a text block too
            return False
        text = b.text
        if type(text) is not str or not (text.isascii() or utf8_writable(text)):
            return False
    if result.result_type != "complete" or type(result.is_error) is not bool:
        return False
    if result.is_error and "isError" not in plain:
        return False
    meta, structured = result.meta, result.structured_content
    if meta is not None and ("_meta" not in plain or not _json_exact(meta)):
        return False
    return structured is None or ("structuredContent" in plain and _json_exact(structured))


def hands_on(result: Any, version: str) -> bool:
    """Whether ``plain_tool_result(result, version)`` is a dict that ``same_after_round_trip`` accepts, told
    from the model's own fields without dumping it (the built-ins' direct path then hands the model on and
    never reads the dict; issue 21). True only when sure: a False (any doubt, a field missing from a model
    built without validation, anything that would raise) sends the caller to those two, as before.
    ``tests/gateway/test_plain_tool_result.py`` compares it with them over generated results."""
    try:
        if type(result) is not CallToolResult:
            return False
        order = _ORDERS.get(version) or _order_of(version)
        if order is None:
            return False
        keys = order[0]
        fields = result.__dict__
        if fields["result_type"] != "complete":
            return False
        flag = fields["is_error"]
        if type(flag) is not bool or (flag and "isError" not in keys):
            return False
        content = fields["content"]
        if type(content) is not list:
            return False
        for b in content:  # dumped as {"type": "text", "text": ...}, nothing else, and validated back equal
            if type(b) is not TextContent:
                return False
            own = b.__dict__
            text = own["text"]
            if own["type"] != "text" or own["annotations"] is not None or own["meta"] is not None:
                return False
            if type(text) is not str or not (text.isascii() or utf8_writable(text)):
                return False
        meta = fields["meta"]
        if meta is not None:
            if "_meta" not in keys or type(meta) is not dict or SERVER_INFO_META_KEY in meta:
                return False
            for v in meta.values():  # a null at the top of _meta: the SDK shapes it
                if v is None:
                    return False
            if not _json_exact(meta):
                return False
        structured = fields["structured_content"]
        if structured is not None:
            if "structuredContent" not in keys or type(structured) is not dict or not _json_exact(structured):
                return False
        return True
    except Exception:  # noqa: BLE001 - whatever it is, the dump's own path says (and raises what it raises)
        return False
