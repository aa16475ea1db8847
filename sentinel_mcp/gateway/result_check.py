"""The check of an upstream's tool result against the ``outputSchema`` its tool declares.

A tool with an output schema promises structured content that fits it, and the client checks the promise with
the schema Sentinel lists. A hostile upstream breaks it: a result that does not fit made the client's call
raise instead of answering, and a backtracking ``pattern`` with a string that does not match held the client's
checker for minutes. So Sentinel checks each successful result of an outside server's tool itself, with the
outside-schema validator (``core/outside_schema.py``: RE2 patterns, no fetched reference, work in proportion
to the value), and says why one cannot be passed on; the caller answers with its own error result. A result
that cannot be checked (an unusable schema, a check past its work bound) is not passed on either: a check that
fails denies. An error result, or a tool without an output schema, is bound by none (as MCP has it).

A validator is compiled in a worker thread, once per schema (``schema_validators``: a catalog rebuild's new
tool objects with the same schema compile nothing); a large value is checked in one too, so no caller waits on
another's megabytes. ``at_once`` says the verdict when neither wait is needed (every call but a tool's first,
for values up to ``INLINE_BYTES``): the gateway shields the check from its caller's cancel only when it waits.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
from mcp.types import CallToolResult, Tool

from sentinel_mcp.core import outside_schema
from sentinel_mcp.core.display_text import compose
from sentinel_mcp.core.echoed_text import MESSAGE_ECHO_LIMIT, echoed
from sentinel_mcp.core.outside_schema import TooCostly, UnusableSchema
from sentinel_mcp.gateway import flat_output_schema
from sentinel_mcp.gateway.flat_output_schema import Plan
from sentinel_mcp.gateway.schema_validators import CompiledSchemas

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

_SIZE = json.JSONEncoder(default=str)
INLINE_BYTES = 64 * 1024  # structured content up to this long is checked on the event loop (microseconds)
UNCHECKED = "its result cannot be checked against its output schema"
UNFIT = "its result does not fit its output schema"
# the tool, its validator, why it has none, and the plan of a flat schema (``flat_output_schema``)
Compiled = tuple[Tool, "Validator | None", "str | None", "Plan | None"]
# what depends on the schema alone, shared by every tool object with that schema
BySchema = CompiledSchemas[tuple["Validator | None", "str | None", "Plan | None"]]


class ResultCheck:
    def __init__(self) -> None:
        # per exposed tool name: its definition and compiled validator (replaced when the definition changes;
        # bounded by the names the catalog gives)
        self._validators: dict[str, Compiled] = {}
        self._compiling: dict[str, tuple[Tool, asyncio.Future[Compiled]]] = {}
        self._by_schema: BySchema = CompiledSchemas()  # a rebuild's new tool objects compile nothing

    @staticmethod
    def binds(tool: Tool, result: CallToolResult) -> bool:
        """Whether ``problem`` looks at ``result`` at all (else it says None): asked without a coroutine."""
        return tool.output_schema is not None and not result.is_error

    def at_once(self, tool: Tool, result: CallToolResult) -> str | None | Later:
        """``problem``'s verdict when it needs no wait (this very tool object's validator compiled, a value
        checked on the event loop), else ``Later``: ``problem`` is awaited then. Plain code, no coroutine: the
        common call enters no cancel scope for a check that cannot be interrupted (issue 21)."""
        if tool.output_schema is None or result.is_error:
            return None
        cached = self._validators.get(tool.name)  # this very tool's, compiled
        if cached is None or cached[0] is not tool:
            return COMPILE
        return _judged(cached, result)

    async def problem(self, tool: Tool, result: CallToolResult) -> str | None:
        """Why ``result`` of ``tool`` cannot be passed on (None: it can)."""
        verdict = self.at_once(tool, result)
        if verdict is COMPILE:
            verdict = _judged(await self._compiled(tool), result)
        if not isinstance(verdict, Later):
            return verdict
        if verdict.validator is None:  # compiled just now, so never: a check that cannot be made denies
            return UNCHECKED
        # a long value: checked in a worker thread (its size measured once, by ``at_once``)
        return await anyio.to_thread.run_sync(_verdict, verdict.validator, result.structured_content,
                                              verdict.size)

    async def _compiled(self, tool: Tool) -> Compiled:
        cached = self._validators.get(tool.name)
        if cached is not None and cached[0] is tool:
            return cached
        pending = self._compiling.get(tool.name)
        if pending is None or pending[0] is not tool:
            future = asyncio.ensure_future(anyio.to_thread.run_sync(_compile, tool, self._by_schema))
            pending = self._compiling[tool.name] = (tool, future)
        compiled = await asyncio.shield(pending[1])  # once however many calls wait for it
        if self._compiling.get(tool.name) is pending:
            del self._compiling[tool.name]
        current = self._validators.get(tool.name)
        if current is None or current[0] is not tool:
            self._validators[tool.name] = compiled
        return compiled


@dataclass(frozen=True, slots=True)
class Later:
    """What ``at_once`` cannot say without a wait: the tool's validator is not compiled yet (``COMPILE``), or
    the value is past ``INLINE_BYTES`` (its ``size``, measured once) and is checked in a worker thread."""

    size: int = 0
    validator: Validator | None = None


COMPILE = Later()


def _judged(compiled: Compiled, result: CallToolResult) -> str | None | Later:
    """The verdict of ``result`` by ``compiled`` (its validator, or why it has none), or ``Later`` with the
    size of a value too long to check on the event loop."""
    structured = result.structured_content
    if structured is None:
        return "it declares an output schema, and its result has no structured content"
    _, validator, unusable, flat = compiled
    if validator is None:
        return f"{UNCHECKED} ({unusable})"
    if flat is not None and flat_output_schema.fits(flat, structured):
        return None  # the common schema, a fitting value: no walk (one that does not fit is told below)
    try:
        size = len(_SIZE.encode(structured))
    except (TypeError, ValueError, RecursionError):
        return f"{UNCHECKED} (its structured content is not JSON)"
    if size <= INLINE_BYTES:
        return _verdict(validator, structured, size)
    return Later(size, validator)


def _compile(tool: Tool, by_schema: BySchema) -> Compiled:
    schema = tool.output_schema
    return (tool, *by_schema.get(schema, lambda: _compile_schema(schema)))


def _compile_schema(schema: Any) -> tuple[Validator | None, str | None, Plan | None]:
    try:
        return outside_schema.validator(schema), None, flat_output_schema.plan(schema)
    except UnusableSchema as e:
        return None, echoed(str(e), MESSAGE_ECHO_LIMIT), None
    except Exception as e:  # noqa: BLE001 - an outside schema's failure is the schema's: nothing is passed on
        return None, f"compiling it failed: {type(e).__name__}", None


def _verdict(validator: Validator, structured: Any, size: int) -> str | None:
    """Why ``structured`` does not fit (thread-safe: the work bound is the thread's own)."""
    try:
        found = outside_schema.errors(validator, structured, size)
    except (UnusableSchema, TooCostly) as e:
        return compose(UNCHECKED, " (", echoed(str(e), MESSAGE_ECHO_LIMIT), ")")
    if not found:
        return None
    error = found[0]
    where = "/".join(str(p) for p in error.absolute_path)
    # the check's message quotes the upstream's value: cut and made visible, as any outside text repeated
    return compose(UNFIT, ": ", echoed(error.message, MESSAGE_ECHO_LIMIT),
                   *((" (at ", echoed(where), ")") if where else ()))
