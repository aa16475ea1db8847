"""A check child reads the catalog it is sent without the MCP types (catalog_tool.tool_view): what it reads of
each of the gateway's tools (name, read-only and destructive hints, absent ones absent, input schema) is what
the ``Tool`` says, and any other shape is refused, never guessed (a hint of "false" is no false hint)."""

from __future__ import annotations

from typing import Any

import pytest
from mcp.types import Tool, ToolAnnotations

from sentinel_mcp.policy.catalog_tool import tool_view

SCHEMA = {"type": "object", "properties": {"x": {"enum": ["a"]}}}


@pytest.mark.parametrize("hints", [
    None, ToolAnnotations(), ToolAnnotations(read_only_hint=True), ToolAnnotations(read_only_hint=False),
    ToolAnnotations(destructive_hint=False), ToolAnnotations(destructive_hint=True, read_only_hint=False),
])
def test_a_tool_is_read_as_it_is(hints: ToolAnnotations | None) -> None:
    tool = Tool(name="bk__t", input_schema=SCHEMA, annotations=hints)
    seen = tool_view(tool.model_dump(mode="json", by_alias=True))
    assert seen.name == tool.name and seen.input_schema == tool.input_schema
    if hints is None:
        assert seen.annotations is None
    else:
        assert seen.annotations is not None
        assert seen.annotations.read_only_hint is hints.read_only_hint
        assert seen.annotations.destructive_hint is hints.destructive_hint


GOOD: dict[str, Any] = {"name": "t", "inputSchema": {"type": "object"}}


@pytest.mark.parametrize("sent", [
    None, [], "t", {}, {"name": "t"}, {"inputSchema": {}}, {**GOOD, "name": 1}, {**GOOD, "inputSchema": "{}"},
    {**GOOD, "annotations": []}, {**GOOD, "annotations": "readOnly"},
    {**GOOD, "annotations": {"readOnlyHint": "true"}}, {**GOOD, "annotations": {"destructiveHint": "false"}},
    {**GOOD, "annotations": {"destructiveHint": 0}}, {**GOOD, "annotations": {"readOnlyHint": 1}},
    {**GOOD, "annotations": {"readOnlyHint": []}},
])
def test_another_shape_is_refused(sent: Any) -> None:
    with pytest.raises(ValueError):
        tool_view(sent)
