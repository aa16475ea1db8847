"""The SDK's ``Mcp-Param-*`` check of a 2026-07-28 ``tools/call`` (``validate_mcp_param_headers``), its walk
of the tool's input schema made once per schema.

The check compares the headers a tool's schema annotates (``x-mcp-header``) with the call's arguments. It
walks the whole schema twice on every call (``find_invalid_x_mcp_header``, ``_annotated_positions``): ~50-90
us for an ordinary schema of a few properties, on every lean call that has arguments, though almost no schema
annotates anything. A schema whose walk finds no annotated position, or an invalid annotation (then the SDK
validates nothing), passes every call whatever its arguments and headers: the SDK's loop has nothing to run.
That verdict is kept per schema object (held, so its id is not reused) with the schema's JSON text, made only
for a schema that is the JSON value its text reads back to (no tuple for a list, no NaN), and used only while
the object in hand is that one and still writes the same text (one changed in place to another text is
walked again). Every other schema is checked by the SDK on every call, as before. The last ``MAX_KEPT``
schemas are kept (a catalog refreshed makes new ones), none longer than ``MAX_KEPT_CHARS``.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from mcp.shared.inbound import (
    InboundLadderRejection,
    _annotated_positions,
    find_invalid_x_mcp_header,
    validate_mcp_param_headers,
)

from sentinel_mcp.core.json_text import compact_encoder

MAX_KEPT = 256  # schemas whose verdict is kept, the most recently used
MAX_KEPT_CHARS = 16 * 1024  # a schema longer than this as text is walked on every call
_TEXT = compact_encoder()  # core/json_text.py: json.dumps(..., separators=(",", ":"))


class ParamHeaderCheck:
    """``refusal(schema, arguments, headers)``: ``validate_mcp_param_headers(schema, arguments, headers)``,
    with the verdict "nothing to check" kept per schema."""

    def __init__(self, capacity: int = MAX_KEPT) -> None:
        self.capacity = capacity
        # id(schema) -> (the schema, its text, the SDK's walk finds nothing to check)
        self._kept: OrderedDict[int, tuple[Any, str, bool]] = OrderedDict()

    def refusal(self, schema: Any, arguments: Mapping[str, Any],
                headers: Mapping[str, str]) -> InboundLadderRejection | None:
        if self._quiet(schema):
            return None
        return validate_mcp_param_headers(schema, arguments, headers)

    def _quiet(self, schema: Any) -> bool:
        text = _text_of(schema)
        if text is None:
            return False
        key = id(schema)
        kept = self._kept.get(key)
        if kept is not None and kept[0] is schema and kept[1] == text:
            self._kept.move_to_end(key)
            return kept[2]
        if len(text) > MAX_KEPT_CHARS or json.loads(text) != schema:
            return False  # walked by the SDK each call
        quiet = _nothing_to_check(schema)
        self._kept[key] = (schema, text, quiet)
        self._kept.move_to_end(key)
        while len(self._kept) > self.capacity:
            self._kept.popitem(last=False)
        return quiet


def _text_of(schema: Any) -> str | None:
    if not isinstance(schema, dict):
        return None
    try:
        return _TEXT(schema)
    except (TypeError, ValueError, RecursionError):
        return None


def _nothing_to_check(schema: Any) -> bool:
    """The SDK's check returns None for this schema whatever the arguments and headers: it validates nothing
    for a schema with an invalid annotation, and its loop runs over the annotated positions alone."""
    if find_invalid_x_mcp_header(schema) is not None:
        return True
    return next(iter(_annotated_positions(schema)), None) is None
