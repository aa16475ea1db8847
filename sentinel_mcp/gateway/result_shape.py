"""An outside server's result as parsed JSON, held to shapes no client needs before any model of it is built.

The SDK's result validation builds a model of every block: 4 MiB of empty text blocks (~140,000, well within
the answer's byte bound, ``max_result_bytes``) held the event loop for 1.6-1.8 s down the SDK client's path,
16 MiB for 6-10 s (load ~5 on 2 cores: benchmarks/README.md), every other client's call waiting; the block
count (``too_many_blocks``) was looked at only afterwards. So each ``tools/call``, ``prompts/get`` and
``resources/read`` result is looked at right after its parse, on every path (the lean calls over stdio and
HTTP, before ``validated_result``; the SDK client's dispatcher, ``ShapedDispatcher``): its list of blocks
(messages, contents) first, a length read, then one walk of the whole result, stopped at the first bound it
crosses (nesting, values, one text; a number JSON cannot spell), so the walk is bounded too. A result past a
bound raises ``ResultRefused``: the caller gets Sentinel's refusal, the connection stays (the message was
read whole, and it is the upstream's answer, not a fault of the pipe)."""

from __future__ import annotations

from collections.abc import Mapping
from math import isfinite
from typing import Any

from sentinel_mcp.core.errors import GatewayError

# nesting of one result: deeper than any content a client shows; the gateway's later walks of a result
# (attribution, marking, the guard's facts) recurse
MAX_DEPTH = 64
# values (an object's entries, a list's items) in one result: 1,000 blocks of a few fields each are some
# 5,000; a big table of structured content fits; past it the models and the walks after them cost seconds
MAX_VALUES = 200_000
# one text (or blob) of a result: no tighter than the largest byte bound (a real file's text may be 10 MiB;
# a 9 MiB text held the loop ~60 ms, a cost the byte bound already caps)
MAX_TEXT_CHARS = 16 * 1024 * 1024
# content blocks of one result (messages of one prompt) from an outside server: far more than a person reads,
# few enough that showing them all stays a matter of milliseconds
MAX_CONTENT_BLOCKS = 1_000
# the method's list of blocks, and what its refusal calls them
BLOCK_LISTS = {"tools/call": ("content", "content blocks"), "prompts/get": ("messages", "messages"),
               "resources/read": ("contents", "resource contents")}


def too_many_blocks(count: int, what: str = "content blocks") -> str | None:
    """Why ``count`` blocks (or messages) are refused, or None."""
    if count <= MAX_CONTENT_BLOCKS:
        return None
    return f"it answered {count:,} {what}, more than the {MAX_CONTENT_BLOCKS:,} Sentinel passes on"


class ResultRefused(GatewayError):
    """An outside server's result past a shape bound; ``kind`` is the refusal's ``sentinel/error``."""

    def __init__(self, why: str, kind: str) -> None:
        super().__init__(why)
        self.why = why
        self.kind = kind


def check_shape(method: str, raw: Any) -> None:
    """Raises ``ResultRefused`` for a result of ``method`` past a bound; any other shape is the model's to
    judge (a result that is no object, a list that is no list)."""
    if not isinstance(raw, dict):
        return
    listed = BLOCK_LISTS.get(method)
    if listed is not None:
        blocks = raw.get(listed[0])
        if isinstance(blocks, list):
            why = too_many_blocks(len(blocks), listed[1])
            if why is not None:
                raise ResultRefused(why, "result_blocks")
    why = past_bounds([raw])
    if why is not None:
        raise ResultRefused(why, "result_shape")


def past_bounds(level: list[Any], values: int = 0, depth: int = 1) -> str | None:
    """Why the containers of ``level`` (at nesting ``depth``, ``values`` already counted beside them) are past
    a bound or hold a non-finite number, or None: a level of containers at a time (no recursion: its depth is
    what is checked), stopped at ``MAX_VALUES``. Keys are not looked at: within the byte bound, and never
    shown. ``check_shape`` walks a whole result from its top; ``plain_upstream_result.plain_call_result``
    (``bound``) the parts of one it does not read itself."""
    while level:
        below: list[Any] = []
        for value in level:
            values += len(value)
            if values > MAX_VALUES:
                return f"it answered more than {MAX_VALUES:,} values in one result"
            for item in value.values() if type(value) is dict else value:
                t = type(item)
                if t is str:
                    if len(item) > MAX_TEXT_CHARS:
                        return f"it answered a text of {len(item):,} characters, more than {MAX_TEXT_CHARS:,}"
                elif t is dict or t is list:
                    below.append(item)
                elif t is float and not isfinite(item):
                    # NaN and Infinity are no JSON (RFC 8259), yet the readers take them: the guard and the
                    # audit saw the number, a client null (or a reader of its own, an error)
                    return f"it answered {item!r}, a number JSON has no spelling for"
        if below and depth >= MAX_DEPTH:
            return f"it answered values nested more than {MAX_DEPTH} deep"
        level, depth = below, depth + 1
    return None


class ShapedDispatcher:
    """An outside server's SDK session dispatcher, its results of ``BLOCK_LISTS``' methods held to the shape
    bounds as they arrive (before the session validates them)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:  # everything else is the session's own dispatcher
        return getattr(self._inner, name)

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: Any = None
    ) -> dict[str, Any]:
        raw: dict[str, Any] = await self._inner.send_raw_request(method, params, opts)
        if method in BLOCK_LISTS:
            check_shape(method, raw)
        return raw
