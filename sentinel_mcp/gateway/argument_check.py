"""The validate step's check of a call's arguments: a JSON object, within the wire limits and the size limit,
valid against the tool's input schema (one compiled validator per tool, replaced when the tool changes).

A validator is compiled in a worker thread (``prepare``), never on the event loop: compiling checks the
upstream's schema against the metaschema, up to ~0.7 s of CPU for the largest schema still checked here, and
every other caller would wait that long on a tool's first call."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

import anyio

from mcp.types import Tool

from sentinel_mcp.core import outside_schema
from sentinel_mcp.core.display_text import compose
from sentinel_mcp.core.echoed_text import MESSAGE_ECHO_LIMIT, echoed
from sentinel_mcp.core.outside_schema import TooCostly, UnusableSchema
from sentinel_mcp.core.wire_limits import MAX_ARGUMENT_DEPTH, ValueWalk, walk_value
from sentinel_mcp.gateway.argument_shape import PLAIN, Shape, compile_shape
from sentinel_mcp.gateway.schema_validators import CompiledSchemas

if TYPE_CHECKING:  # jsonschema is imported by the first call's check, not at start-up (issue 21)
    from jsonschema.protocols import Validator

# ``json.dumps(arguments, default=str)``'s encoder, built once (dumps with an option builds one per call)
_SIZE = json.JSONEncoder(default=str)
_EMPTY_SIZE = 2  # len("{}")
# the tool, its validator, the verdict on ``{}``, the shape its arguments are given (``argument_shape``)
Compiled = tuple[Tool, "Validator | None", "str | None", Shape]


class ArgumentCheck:
    def __init__(self) -> None:
        # per tool name: the tool, its compiled validator, and the verdict on ``{}`` (the arguments of most
        # calls to tools without parameters: it depends on the schema only); replaced when the upstream's
        # tool changes (bounded by the catalog)
        self._validators: dict[str, Compiled] = {}
        # per tool name: the tool whose validator a worker thread is compiling, and that compilation
        self._compiling: dict[str, tuple[Tool, asyncio.Future[Compiled]]] = {}
        # validators by schema: a catalog rebuild's new tool objects compile nothing (``schema_validators``)
        self._by_schema: CompiledSchemas[tuple[Validator | None, Shape]] = CompiledSchemas()

    def ready(self, tool: Tool) -> bool:
        """Whether ``tool``'s validator is compiled (else ``prepare`` it first)."""
        cached = self._validators.get(tool.name)
        return cached is not None and cached[0] is tool

    async def prepare(self, tool: Tool) -> None:
        """``tool``'s validator compiled (in a worker thread, once however many calls wait for it), so that
        ``problem`` finds it ready."""
        if self.ready(tool):
            return
        pending = self._compiling.get(tool.name)
        if pending is None or pending[0] is not tool:
            future = asyncio.ensure_future(anyio.to_thread.run_sync(_compile, tool, self._by_schema))
            pending = self._compiling[tool.name] = (tool, future)
            mine = pending

            def done(_future: asyncio.Future[Compiled]) -> None:
                self._compiled_in_thread(tool.name, mine)

            future.add_done_callback(done)
        await asyncio.shield(pending[1])

    def _compiled_in_thread(self, name: str, pending: tuple[Tool, asyncio.Future[Compiled]]) -> None:
        if self._compiling.get(name) is pending:
            del self._compiling[name]
        future = pending[1]
        if not future.cancelled() and future.exception() is None:
            current = self._validators.get(name)
            if current is None or current[0] is not pending[0]:
                self._validators[name] = future.result()

    def problem(self, tool: Tool, arguments: Any, max_bytes: int) -> str | None:
        """Why ``arguments`` cannot be passed to ``tool`` (None: they can); ``max_bytes``: their JSON's limit.
        """
        return self.check(tool, arguments, max_bytes)[0]

    def check(self, tool: Tool, arguments: Any, max_bytes: int,
              composed: bool = True) -> tuple[str | None, ValueWalk | None]:
        """``problem``, and the walk of the arguments that told their shape (None: not walked, as ``{}``), for
        the argument form's checks (``argument_form``); ``composed`` false: texts not in NFC are taken (the
        upstream's ``argument_texts: "as_sent"``)."""
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            return (
                f"invalid arguments for {tool.name}: expected a JSON object, got {type(arguments).__name__}"
            ), None
        if not arguments:  # ``{}``: nothing to walk or encode, and the schema's verdict on it is remembered
            if _EMPTY_SIZE > max_bytes:
                return f"arguments for {tool.name} are too large ({_EMPTY_SIZE} bytes > {max_bytes})", None
            return self._compiled(tool)[2], None
        # before anything walks them recursively; one reading of every value for the guard and the upstream
        walk = walk_value(arguments, MAX_ARGUMENT_DEPTH, one_reading=True, composed=composed)
        if walk[0] is not None:
            return f"invalid arguments for {tool.name}: {walk[0]}", walk
        size = len(_SIZE.encode(arguments))
        if size > max_bytes:
            return f"arguments for {tool.name} are too large ({size} bytes > {max_bytes})", walk
        return _verdict(tool, self._compiled(tool)[1], arguments, size), walk

    def shape(self, tool: Tool) -> Shape:
        """The shape ``tool``'s arguments are given before the guard (defaults filled, undeclared keys
        refused: ``argument_shape``); compiled with its validator."""
        return self._compiled(tool)[3]

    def _compiled(self, tool: Tool) -> Compiled:
        cached = self._validators.get(tool.name)
        if cached is not None and cached[0] is tool:
            return cached
        # not prepared: compiled here
        compiled = self._validators[tool.name] = _compile(tool, self._by_schema)
        return compiled


def _compile(tool: Tool, by_schema: CompiledSchemas[tuple[Validator | None, Shape]]) -> Compiled:
    """The tool, its validator, the verdict on ``{}`` and its arguments' shape (thread-safe: a worker thread
    may run it); compiled once per schema (``schema_validators``: a catalog rebuild's new tool objects)."""
    schema = tool.input_schema
    validator, shape = by_schema.get(schema, lambda: _compile_schema(schema))
    return (tool, validator, _verdict(tool, validator, {}, _EMPTY_SIZE), shape)


def _compile_schema(schema: Any) -> tuple[Validator | None, Shape]:
    try:  # the upstream's schema: no reference fetched, no backtracking pattern (core/outside_schema.py)
        validator = outside_schema.validator(schema)
    except UnusableSchema:
        return None, PLAIN  # a schema we cannot check here: let the upstream judge its own input
    return validator, compile_shape(schema, validator)


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
    # the schema check's message quotes the caller's value whole (and a path its keys): cut, the quoted
    # value first so the message still says what is wrong with it
    message = error.message
    if len(message) > MESSAGE_ECHO_LIMIT:
        quoted = repr(error.instance)
        head, found, tail = message.partition(quoted)
        message = compose(head, echoed(quoted), tail) if found else message
    where = "/".join(str(p) for p in error.absolute_path)
    return compose("invalid arguments for ", tool.name, ": ", echoed(message, MESSAGE_ECHO_LIMIT),
                   *((" (at ", echoed(where), ")") if where else ()))
