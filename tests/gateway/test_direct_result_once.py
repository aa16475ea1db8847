"""A built-in's plain result on the direct (in-process) path is handed on as the handler's own model, not
dumped and validated back (``plain_tool_result.same_after_round_trip``,
``unspanned_kernel.serve_checked_call`` with ``model``): only when that validation would give the same
model field for field, so the answer is the in-memory pair's, with the gateway's ``_meta``; any other
result still takes the round trip."""

from __future__ import annotations

import random
from typing import Any

import pytest
from mcp import Client
from mcp.server import Server, ServerRequestContext
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ImageContent,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)
from mcp_types import methods as _methods
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway import plain_tool_result as ptr
from sentinel_mcp.gateway.upstream import BuiltinTarget
from tests.gateway.helpers import make_config
from tests.gateway.test_builtin_direct import _same
from tests.gateway.test_plain_tool_result import result as generated

pytestmark = pytest.mark.timeout(90)
HANDSHAKE = sorted(
    {v for (m, v) in _methods.SERVER_RESULTS if m == "tools/call"} - set(MODERN_PROTOCOL_VERSIONS))
READ = ToolAnnotations(read_only_hint=True, destructive_hint=False)


def results() -> dict[str, CallToolResult]:
    text = [TextContent(type="text", text="ok")]
    return {
        "plain": CallToolResult(content=text),
        "shaped": CallToolResult(content=text, structured_content={"a": [1, 2.5, None, {"b": True}]},
                                 meta={"vendor/k": "v", "n": 3}, is_error=False),
        "failed": CallToolResult(content=text, is_error=True),
        # what validation would change: a tuple becomes a list, an infinite float null, an image is no text
        "tuple": CallToolResult(content=text).model_copy(update={"structured_content": {"a": (1, 2)}}),
        "inf": CallToolResult(content=text, structured_content={"a": float("inf")}),
        "image": CallToolResult(content=[ImageContent(type="image", data="aGk=", mime_type="image/png")]),
    }


def server_of(made: dict[str, CallToolResult]) -> Server:
    tools = [Tool(name=n, description=n, input_schema={"type": "object"}, annotations=READ) for n in made]

    async def list_tools(_: ServerRequestContext, __: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=tools)

    async def call_tool(_: ServerRequestContext, params: CallToolRequestParams) -> CallToolResult:
        return made[params.name]

    return Server("twin", version="1", on_list_tools=list_tools, on_call_tool=call_tool)


def _types(v: Any) -> Any:
    """``v`` with every value's exact type beside it (an equal value of another type is a difference)."""
    if isinstance(v, dict):
        return ("dict", type(v).__name__, {k: (type(k).__name__, _types(x)) for k, x in v.items()})
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [_types(x) for x in v])
    return (type(v).__name__, repr(v))


@pytest.mark.parametrize("version", HANDSHAKE)
def test_a_result_handed_on_is_what_validating_its_dump_gives(version: str) -> None:
    rng = random.Random(f"once-{version}")
    handed = 0
    for i in range(800):
        r = generated(rng)
        try:
            plain = ptr.plain_tool_result(r, version)
        except UnicodeEncodeError:
            continue
        if plain is None or not ptr.same_after_round_trip(r, plain):
            continue
        handed += 1
        back = CallToolResult.model_validate(plain, by_name=False)
        assert back == r, i
        for field in CallToolResult.model_fields:
            assert _types(getattr(back, field)) == _types(getattr(r, field)), (i, field)
    assert handed >= 100, handed


def test_what_validation_would_change_is_not_handed_on() -> None:
    made = results()
    for version in HANDSHAKE:
        for name in ("tuple", "inf"):
            plain = ptr.plain_tool_result(made[name], version)
            assert plain is not None and not ptr.same_after_round_trip(made[name], plain), name
        assert ptr.same_after_round_trip(made["plain"], ptr.plain_tool_result(made["plain"], version) or {})
        as_dict = CallToolResult(content=[]).model_copy(update={"content": [{"type": "text", "text": "x"}]})
        assert not ptr.same_after_round_trip(as_dict, ptr.plain_tool_result(as_dict, version) or {})
        too_big = CallToolResult(content=[], structured_content={"a": list(range(300))})
        assert not ptr.same_after_round_trip(too_big, ptr.plain_tool_result(too_big, version) or {})


async def test_the_direct_answer_skips_the_round_trip_and_equals_the_pairs(data_dir: Any) -> None:
    made = results()
    async with running_gateway(make_config(data_dir, servers={})) as rt:
        pair = rt.manager.add("lo", BuiltinTarget(server=server_of(made), direct_tools=frozenset()))
        direct = rt.manager.add("ld", BuiltinTarget(server=server_of(made), direct_tools=frozenset(made)))
        for up in (pair, direct):
            assert await up.wait_ready(20), up.last_error
        dispatcher = direct.direct
        assert dispatcher is not None
        session = dispatcher._session
        adapter = session._call_tool_adapter
        validated: list[Any] = []

        class Counting:
            def validate_python(self, raw: Any, **kw: Any) -> Any:
                validated.append(raw)
                return adapter.validate_python(raw, **kw)

        session._call_tool_adapter = Counting()
        async with Client(rt.front.server, mode="legacy") as c:
            for name in made:
                before = len(validated)
                a = await c.call_tool(f"lo__{name}", {})
                b = await c.call_tool(f"ld__{name}", {})
                da = a.model_dump(mode="json", by_alias=True, exclude_none=True)
                db = b.model_dump(mode="json", by_alias=True, exclude_none=True)
                assert _same(da) == _same(db), name
                # the gateway's own _meta on the answer: its decision and the session a client carries back
                assert set(db["_meta"]) >= {"sentinel/decision_id", "sentinel/session"}, db
                rounds = len(validated) - before
                assert rounds == (1 if name in ("tuple", "inf", "image") else 0), (name, rounds)
        assert dispatcher.direct_calls == len(made)


def shapes() -> list[CallToolResult]:
    """The shapes a tool answers with, plain or not: text, an image, an embedded resource, structured content,
    an error flag, ``_meta``, text beyond ASCII, integers past 64 bits, and models never validated."""
    from mcp.types import EmbeddedResource, TextResourceContents

    text = [TextContent(type="text", text="ok")]
    return [
        CallToolResult(content=text),
        CallToolResult(content=[]),
        CallToolResult(content=[TextContent(type="text", text="h\u00e9llo \u4e16\u754c \U0001f600")] * 3),
        CallToolResult(content=[ImageContent(type="image", data="aGk=", mime_type="image/png")]),
        CallToolResult(content=[EmbeddedResource(type="resource",
                                                 resource=TextResourceContents(uri="file:///x", text="x"))]),
        CallToolResult(content=text,
                       structured_content={"n": 2**70, "m": -(10**30), "f": 0.5, "s": "\u00e9"}),
        CallToolResult(content=text, structured_content={"deep": [{"a": [None, True, {"b": "c"}]}]}),
        CallToolResult(content=text, structured_content={}),
        CallToolResult(content=text, is_error=True),
        CallToolResult(content=text, is_error=False, meta={"vendor/k": "v", "big": 2**65}),
        CallToolResult(content=text, meta={}),
        CallToolResult(content=text, meta={"a": None}),
        CallToolResult(content=text, meta={"a": {"b": None}}),
        CallToolResult(content=text,
                       meta={"io.modelcontextprotocol/serverInfo": {"name": "x", "version": "1"}}),
        CallToolResult(content=text, structured_content={"k\ud800": 1}),
        CallToolResult(content=[TextContent(type="text", text="lone \udc00")]),
        CallToolResult(content=text, structured_content={"a": list(range(300))}),
        CallToolResult(content=text).model_copy(update={"structured_content": {"a": (1, 2)}}),
        CallToolResult(content=text).model_copy(update={"structured_content": ["a list"]}),
        CallToolResult(content=text).model_copy(update={"meta": {1: "x"}}),
        CallToolResult(content=text).model_copy(update={"is_error": 1}),
        CallToolResult(content=text).model_copy(update={"result_type": "input_required"}),
        CallToolResult(content=text).model_copy(update={"content": ({"type": "text", "text": "x"},)}),
        CallToolResult(content=text).model_copy(update={"content": (TextContent(type="text", text="x"),)}),
        CallToolResult(content=[TextContent.model_construct(type="text")]),
        CallToolResult(content=[TextContent.model_construct(type="image", text="x")]),
        CallToolResult.model_construct(content=text, result_type="complete"),
        CallToolResult(content=text).model_copy(update={"unknown_field": 1}),
        CallToolResult(content=[TextContent(type="text", text="t").model_copy(update={"meta": {"a": 1}})]),
    ]


def _old_rule(r: Any, version: str) -> bool | str:
    """What the direct path decided before ``hands_on``: the dump, then the round-trip check."""
    try:
        plain = ptr.plain_tool_result(r, version)
    except Exception as e:  # noqa: BLE001 - compared: hands_on must then say no (the dump's path raises it)
        return type(e).__name__
    return plain is not None and ptr.same_after_round_trip(r, plain)


@pytest.mark.parametrize("version", sorted({v for (m, v) in _methods.SERVER_RESULTS if m == "tools/call"}))
def test_hands_on_is_the_dumps_decision_without_the_dump(version: str) -> None:
    """``hands_on`` (no dump) says yes exactly where the dump and its round-trip check said yes, over the
    shapes above and thousands of generated results; where the dump raised, it says no (so the dump's path
    runs and raises as before)."""
    rng = random.Random(f"hands-on-{version}")
    cases = shapes() + [generated(rng) for _ in range(3000)]
    yes = 0
    for i, r in enumerate(cases):
        old = _old_rule(r, version)
        assert ptr.hands_on(r, version) is (old is True), (i, r, old)
        yes += old is True
    if version in HANDSHAKE:
        assert yes >= 400, yes


async def test_a_plain_direct_answer_is_never_dumped(data_dir: Any, monkeypatch: Any) -> None:
    """The direct path of a plain answer makes no dump at all (it made one, only to check it); the answer is
    the in-memory pair's."""
    from sentinel_mcp.gateway import unspanned_kernel

    dumps: list[Any] = []
    real = unspanned_kernel.plain_tool_result

    def counting(r: Any, version: str) -> Any:
        dumps.append(r)
        return real(r, version)

    monkeypatch.setattr(unspanned_kernel, "plain_tool_result", counting)
    made = results()
    async with running_gateway(make_config(data_dir, servers={})) as rt:
        pair = rt.manager.add("lo", BuiltinTarget(server=server_of(made), direct_tools=frozenset()))
        direct = rt.manager.add("ld", BuiltinTarget(server=server_of(made), direct_tools=frozenset(made)))
        for up in (pair, direct):
            assert await up.wait_ready(20), up.last_error
        async with Client(rt.front.server, mode="legacy") as c:
            for name in made:
                a = await c.call_tool(f"lo__{name}", {})
                before = len(dumps)
                b = await c.call_tool(f"ld__{name}", {})
                da = a.model_dump(mode="json", by_alias=True, exclude_none=True)
                db = b.model_dump(mode="json", by_alias=True, exclude_none=True)
                assert _same(da) == _same(db), name
                inner = [d for d in dumps[before:] if d is made[name]]
                # a plain dump that validation would change: one dump; an image: the SDK's shaping asks too
                want = {"tuple": 1, "inf": 1, "image": 2}.get(name, 0)
                assert len(inner) == want, (name, len(inner))
