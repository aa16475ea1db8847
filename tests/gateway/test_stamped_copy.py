"""A call's answer is stamped with its record (``CallRecord.stamp``) by ``call_record.with_meta``: the copy
``model_copy(update={"meta": ...})`` gives (the same ``__dict__`` in the same order, fields set, extra and
private, the same dumps), the original untouched, for results however they were built."""

from __future__ import annotations

from typing import Any

from mcp.types import CallToolResult, TextContent

from sentinel_mcp.gateway.call_record import with_meta
from sentinel_mcp.gateway.plain_upstream_result import plain_call_result


def _state(m: Any) -> Any:
    return (type(m), list(m.__dict__.items()), m.__pydantic_fields_set__, m.__pydantic_extra__,
            m.__pydantic_private__, repr(m), m.model_dump(by_alias=True, exclude_unset=True),
            m.model_dump(by_alias=True, mode="json"))


class Later(CallToolResult):  # a subclass goes through model_copy
    pass


def results() -> list[CallToolResult]:
    text = [{"type": "text", "text": "ok"}]
    return [
        CallToolResult(content=[TextContent(type="text", text="x")]),
        CallToolResult.model_validate({"content": text, "isError": True, "_meta": {"a": 1}}),
        CallToolResult.model_validate({"content": [], "structuredContent": {"k": [1, 2]},
                                       "resultType": "complete"}),
        CallToolResult.model_construct(),
        plain_call_result("2026-07-28", {"content": text, "resultType": "complete"}),  # type: ignore[list-item]
        plain_call_result("2025-11-25", {"content": text, "_meta": None}),  # type: ignore[list-item]
        Later(content=[]),
    ]


def test_the_stamped_copy_is_what_model_copy_gives() -> None:
    for result in results():
        before = _state(result)
        for meta in ({"sentinel/decision_id": "d1"}, {"a": 2, "sentinel/decision_id": "d2"}, {}):
            got, want = with_meta(result, dict(meta)), result.model_copy(update={"meta": dict(meta)})
            assert _state(got) == _state(want)
            assert got is not result and got.__dict__ is not result.__dict__
            assert got.__pydantic_fields_set__ is not result.__pydantic_fields_set__
        assert _state(result) == before  # the original untouched
