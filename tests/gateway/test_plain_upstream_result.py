"""An upstream's plain ``tools/call`` result read directly (``plain_upstream_result.py``) is the model the
SDK's client validation builds (``lean_upstream.validated_result`` with the fast path off): the same fields,
values, fields set (recursively) and dump, or the same refusal; over generated results, plain and nearly
plain, in every protocol version; and plain results take the direct path."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from mcp.client.session import _CallToolResultAdapter
from mcp.shared.exceptions import MCPError
from mcp_types import methods as _methods

from sentinel_mcp.gateway import lean_upstream
from sentinel_mcp.gateway.plain_upstream_result import plain_call_result
from tests.gateway.test_plain_tool_result import texts, value

VERSIONS = sorted({v for (m, v) in _methods.SERVER_RESULTS if m == "tools/call"})


class _Session:
    _call_tool_adapter = _CallToolResultAdapter


class _Client:
    session = _Session()


def raw_result(rng: random.Random, version: str) -> dict[str, Any]:
    """A parsed result as an upstream may send it: mostly plain, often one step away from it."""
    blocks = [{"type": "text", "text": texts(rng)} for _ in range(rng.randint(0, 3))]
    raw: dict[str, Any] = {"content": blocks}
    if rng.random() < 0.5:
        key = texts(rng)[:10] or "k"
        raw["structuredContent"] = rng.choice([{key: value(rng)}, {}, None, [1, "a"], "s", 3])
    if rng.random() < 0.5:
        raw["isError"] = rng.random() < 0.5
    if rng.random() < 0.6:
        raw["_meta"] = rng.choice([
            {"io.modelcontextprotocol/serverInfo": {"name": "up", "version": "1"}},
            {texts(rng)[:8] or "k": value(rng)}, {}, None,
        ])
    if version == "2026-07-28" or rng.random() < 0.3:
        raw["resultType"] = "complete"
    odd = rng.random()
    if odd < 0.4:
        return raw
    near: list[Any] = [
        lambda: raw.__setitem__("resultType", rng.choice(["input_required", "other", None, 1, ""])),
        lambda: raw.pop("resultType", None),
        lambda: raw.__setitem__("isError", rng.choice([0, 1, "true", None, "yes"])),
        lambda: raw.__setitem__("_meta", rng.choice(["text", [1], 5])),
        lambda: raw.__setitem__("content", rng.choice([None, "text", {}, [None], ["text"]])),
        lambda: raw.pop("content"),
        lambda: raw["content"].append({"type": "text", "text": "t", "annotations": None}),
        lambda: raw["content"].append({"type": "text", "text": "t", "_meta": {"a": 1}}),
        lambda: raw["content"].append({"type": "text", "text": 5}),
        lambda: raw["content"].append({"type": "text"}),
        lambda: raw["content"].append({"type": "image", "data": "aGk=", "mimeType": "image/png"}),
        lambda: raw["content"].append({"type": "TEXT", "text": "t"}),
        lambda: raw["content"].append({"text": "t", "kind": "text"}),
        lambda: raw.__setitem__("extra", 1),
        lambda: raw.__setitem__("ttlMs", rng.choice([-5, 10])),
        lambda: raw.__setitem__("requestState", "s"),
        lambda: raw.__setitem__("inputRequests", {}),
    ]
    rng.choice(near)()
    return raw


def outcome(version: str, raw: dict[str, Any], direct: bool) -> Any:
    raw = json.loads(json.dumps(raw))  # each side gets its own copy (the SDK path may change it)
    if not direct:
        fast, lean_upstream.plain_call_result = lean_upstream.plain_call_result, lambda *_: None
    try:
        r = lean_upstream.validated_result(_Client(), version, raw)  # type: ignore[arg-type]
    except MCPError as e:
        return ("refused", e.error.code, e.error.message[:60])
    finally:
        if not direct:
            lean_upstream.plain_call_result = fast
    blocks = getattr(r, "content", None) or []
    return (
        "ok", type(r).__name__, r,
        _dumped(r, exclude_unset=True), _dumped(r), _dumped(r, mode="python"),
        sorted(r.model_fields_set),
        [(type(b).__name__, sorted(b.model_fields_set), b.model_dump(by_alias=True, exclude_unset=True))
         for b in blocks],
    )


def _dumped(r: Any, mode: str = "json", **kw: Any) -> Any:
    try:
        return r.model_dump(by_alias=True, mode=mode, **kw)
    except Exception as e:  # noqa: BLE001 - compared (a lone surrogate cannot be written as JSON)
        return ("dump raised", type(e).__name__)


@pytest.mark.parametrize("version", VERSIONS)
def test_a_plain_result_is_the_model_the_sdks_validation_builds(version: str) -> None:
    rng = random.Random(f"plain-upstream-{version}")
    took = 0
    for i in range(700):
        raw = raw_result(rng, version)
        took += plain_call_result(version, json.loads(json.dumps(raw))) is not None
        assert outcome(version, raw, True) == outcome(version, raw, False), (i, raw)
    assert took >= 150, took  # plain results (some 40 % of those generated) take the direct path


def test_only_the_core_adapter_takes_the_direct_path() -> None:
    """A client whose tools/call adapter has extension claims always validates through it."""
    class Other:
        _call_tool_adapter = object()

    class OtherClient:
        session = Other()

    raw = {"content": [{"type": "text", "text": "x"}], "resultType": "complete"}
    with pytest.raises(AttributeError):  # the SDK path, which this fake adapter cannot serve
        lean_upstream.validated_result(OtherClient(), "2026-07-28", raw)  # type: ignore[arg-type]
    assert lean_upstream.validated_result(_Client(), "2026-07-28", dict(raw)).content[0].text == "x"


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_deep_nesting_is_read_alike(version: str) -> None:
    """Nested objects and lists around the direct path's depth bound (64) and far past pydantic's own."""
    for depth in (1, 10, 63, 64, 65, 300, 2000):
        nested: Any = "leaf \ud800" if depth == 300 else "leaf"
        for i in range(depth):
            nested = {"k": nested} if i % 2 else [nested]
        for where in ("structuredContent", "_meta"):
            raw = {"content": [{"type": "text", "text": "x"}], "resultType": "complete",
                   where: {"v": nested}}
            try:
                json.dumps(raw)
            except RecursionError:
                continue  # the upstream's JSON could not have held it either
            assert outcome(version, raw, True) == outcome(version, raw, False), (depth, where)


def _state(m: Any) -> Any:
    return (type(m), list(m.__dict__.items()), m.__pydantic_fields_set__, m.__pydantic_extra__,
            m.__pydantic_private__, repr(m))


def test_the_read_once_constructor_builds_what_model_construct_builds() -> None:
    """The same ``__dict__`` in the same order, fields set, extra and private as ``model_construct``; values
    naming an alias or leaving a required field out, and models it does not fit, take ``model_construct``."""
    from mcp.types import CallToolResult, InputRequiredResult, TextContent

    from sentinel_mcp.gateway.plain_upstream_result import constructor

    block, result = constructor(TextContent), constructor(CallToolResult)
    cases = [
        (block, TextContent, {"type", "text"}, {"type": "text", "text": "t"}),
        (block, TextContent, {"text"}, {"text": "t"}),
        (block, TextContent, {"type", "text", "meta"}, {"type": "text", "text": "t", "meta": {"a": 1}}),
        (block, TextContent, {"type"}, {"type": "text"}),  # required text left out
        (block, TextContent, {"text", "meta"}, {"text": "t", "_meta": {"a": 1}}),  # an alias
        (result, CallToolResult, {"content"}, {"content": []}),
        (result, CallToolResult, {"content", "is_error", "result_type"},
         {"is_error": True, "content": [TextContent(type="text", text="x")], "result_type": "complete"}),
        (result, CallToolResult, {"content", "meta", "structured_content"},
         {"meta": None, "structured_content": {"k": [1]}, "content": []}),
        (result, CallToolResult, set(), {}),
        (result, CallToolResult, {"content", "isError"}, {"content": [], "isError": True}),
    ]
    for build, cls, fields_set, values in cases:
        built = build(set(fields_set), **values)
        assert _state(built) == _state(cls.model_construct(set(fields_set), **values))
    # whichever way another model is read, it builds what model_construct builds
    other = InputRequiredResult
    assert _state(constructor(other)(set())) == _state(other.model_construct(set()))
