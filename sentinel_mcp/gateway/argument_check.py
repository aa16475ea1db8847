"""The validate step's check of a call's arguments: a JSON object, within the wire limits and the size limit,
valid against the tool's input schema (one compiled validator per tool, replaced when the tool changes)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from mcp.types import Tool

from sentinel_mcp.core import outside_schema
from sentinel_mcp.core.outside_schema import TooCostly, UnusableSchema
from sentinel_mcp.core.wire_limits import MAX_ARGUMENT_DEPTH, value_problem

if TYPE_CHECKING:  # jsonschema is imported by the first call's check, not at start-up (issue 21)
    from jsonschema.protocols import Validator

# ``json.dumps(arguments, default=str)``'s encoder, built once (dumps with an option builds one per call)
_SIZE = json.JSONEncoder(default=str)
_EMPTY_SIZE = 2  # len("{}")


class ArgumentCheck:
    def __init__(self) -> None:
        # per tool name: the tool, its compiled validator, and the verdict on ``{}`` (the arguments of most
        # calls to tools without parameters: it depends on the schema only); replaced when the upstream's
        # tool changes (bounded by the catalog)
        self._validators: dict[str, tuple[Tool, Validator | None, str | None]] = {}

    def problem(self, tool: Tool, arguments: Any, max_bytes: int) -> str | None:
        """Why ``arguments`` cannot be passed to ``tool`` (None: they can); ``max_bytes``: their JSON's limit.
        """
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            return (
                f"invalid arguments for {tool.name}: expected a JSON object, got {type(arguments).__name__}"
            )
        if not arguments:  # ``{}``: nothing to walk or encode, and the schema's verdict on it is remembered
            if _EMPTY_SIZE > max_bytes:
                return f"arguments for {tool.name} are too large ({_EMPTY_SIZE} bytes > {max_bytes})"
            return self._compiled(tool)[2]
        shape = value_problem(arguments, MAX_ARGUMENT_DEPTH)  # before anything walks them recursively
        if shape is not None:
            return f"invalid arguments for {tool.name}: {shape}"
        size = len(_SIZE.encode(arguments))
        if size > max_bytes:
            return f"arguments for {tool.name} are too large ({size} bytes > {max_bytes})"
        return _verdict(tool, self._compiled(tool)[1], arguments, size)

    def _compiled(self, tool: Tool) -> tuple[Tool, Validator | None, str | None]:
        cached = self._validators.get(tool.name)
        if cached is not None and cached[0] is tool:
            return cached
        try:  # the upstream's schema: no reference fetched, no backtracking pattern (core/outside_schema.py)
            validator: Validator | None = outside_schema.validator(tool.input_schema)
        except UnusableSchema:
            validator = None  # a schema we cannot check here: let the upstream judge its own input
        compiled = self._validators[tool.name] = (tool, validator, _verdict(tool, validator, {}, _EMPTY_SIZE))
        return compiled


def _verdict(tool: Tool, validator: Validator | None, arguments: dict[str, Any], size: int) -> str | None:
    if validator is None:
        return None
    try:
        found = outside_schema.errors(validator, arguments, size)
    except UnusableSchema:
        return None  # as for a schema found unusable when compiled: the upstream judges
    except TooCostly as e:  # a check that cannot finish is no verdict: refused, never waved through
        return f"invalid arguments for {tool.name}: they cannot be checked against the tool's schema ({e})"
    if not found:
        return None
    error = found[0]
    where = "/".join(str(p) for p in error.absolute_path)
    return f"invalid arguments for {tool.name}: {error.message}" + (f" (at {where})" if where else "")
