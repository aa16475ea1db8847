"""What the checker reads of a catalog's tool (``CatalogTool``), and that read back from the JSON a check
child is sent (``tool_view``), without the MCP types.

Importing ``mcp.types`` is about half of a check child's start-up (``benchmarks/check_child_start.py``); the
checker reads only a tool's name, its read-only and destructive hints (an absent hint is not a false one:
MCP's defaults) and its input schema. The parent sends the gateway's own ``Tool`` objects as their JSON
(``model_dump(by_alias=True)``); read back type-strictly, anything else is refused (``ValueError``), never
guessed: a check then could not finish, never a check that read a hint wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


class CatalogHints(Protocol):
    @property
    def read_only_hint(self) -> bool | None: ...

    @property
    def destructive_hint(self) -> bool | None: ...


class CatalogTool(Protocol):
    """A tool as the checker reads it: ``mcp.types.Tool`` is one, ``ToolView`` another."""

    @property
    def name(self) -> str: ...

    @property
    def annotations(self) -> CatalogHints | None: ...

    @property
    def input_schema(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class HintsView:
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None


@dataclass(frozen=True)
class ToolView:
    name: str
    annotations: HintsView | None = None
    input_schema: dict[str, Any] = field(default_factory=dict)


def _hint(value: Any) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    raise ValueError("a tool's hint is true, false or absent")


def tool_view(sent: Any) -> ToolView:
    """A tool from the JSON of an ``mcp.types.Tool`` (MCP's field names); ``ValueError`` for another shape."""
    if not isinstance(sent, dict):
        raise ValueError("a tool is an object")
    name, schema, hints = sent.get("name"), sent.get("inputSchema"), sent.get("annotations")
    if not isinstance(name, str) or not isinstance(schema, dict):
        raise ValueError("a tool has a name and an input schema")
    if hints is None:
        return ToolView(name, None, schema)
    if not isinstance(hints, dict):
        raise ValueError("a tool's annotations are an object")
    read = HintsView(_hint(hints.get("readOnlyHint")), _hint(hints.get("destructiveHint")))
    return ToolView(name, read, schema)
