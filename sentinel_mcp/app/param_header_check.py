"""The SDK's ``Mcp-Param-*`` check of a 2026-07-28 ``tools/call`` (``validate_mcp_param_headers``), its walk
of the tool's input schema made once per schema.

The check compares the headers a tool's schema annotates (``x-mcp-header``) with the call's arguments. It
walks the whole schema twice on every call (``find_invalid_x_mcp_header``, ``_annotated_positions``): ~50-90
us for an ordinary schema of a few properties, on every lean call that has arguments, though almost no schema
annotates anything. A schema whose walk finds no annotated position, or an invalid annotation (then the SDK
validates nothing), passes every call whatever its arguments and headers: the SDK's loop has nothing to run.
That verdict is kept per schema, keyed by the schema's JSON text, and used only when the schema in hand is the
JSON value that text reads back to (so a tuple for a list, or a schema changed in place, is walked again);
every other schema is checked by the SDK on every call, as before.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mcp.shared.inbound import (
    InboundLadderRejection,
    _annotated_positions,
    find_invalid_x_mcp_header,
    validate_mcp_param_headers,
)

from sentinel_mcp.core.json_text import compact_encoder

MAX_KEPT = 1024  # schemas whose verdict is kept (past it, each is walked on every call, as before)
MAX_KEPT_CHARS = 64 * 1024  # a schema longer than this as text is walked on every call
_TEXT = compact_encoder()  # core/json_text.py: json.dumps(..., separators=(",", ":"))


class ParamHeaderCheck:
    """``refusal(schema, arguments, headers)``: ``validate_mcp_param_headers(schema, arguments, headers)``,
    with the verdict "nothing to check" kept per schema."""

    def __init__(self, capacity: int = MAX_KEPT) -> None:
        self.capacity = capacity
        self._quiet: dict[str, bool] = {}  # schema text -> the SDK's walk finds nothing to check

    def refusal(self, schema: Any, arguments: Mapping[str, Any],
                headers: Mapping[str, str]) -> InboundLadderRejection | None:
        text = _text_of(schema)
        quiet = self._quiet.get(text) if text is not None else None
        if quiet is None and text is not None and len(text) <= MAX_KEPT_CHARS:
            if len(self._quiet) < self.capacity and json.loads(text) == schema:
                quiet = self._quiet[text] = _nothing_to_check(schema)
        elif quiet is not None and json.loads(text) != schema:  # type: ignore[arg-type]
            quiet = None  # the same text, another value (a tuple for a list): walked as the SDK walks it
        if quiet:
            return None
        return validate_mcp_param_headers(schema, arguments, headers)


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
