"""The lean runner's shaping of a ``tools/call`` result (``plain_tool_result.py``) is the SDK runner's, byte
for byte: over generated results (plain and not: images, annotations, blocks with their own ``_meta``, nulls,
hostile texts, odd ``resultType``s, keys that are not text, models built without validation) in every protocol
version; and the plain path is the one most results take."""

from __future__ import annotations

import json
import random
import warnings
from typing import Any

import pytest
from mcp.server import Server
from mcp.server.connection import Connection
from mcp.server.runner import ServerRunner
from mcp.shared.exceptions import MCPError
from mcp.types import (
    Annotations,
    AudioContent,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)
from mcp_types import methods as _methods

from sentinel_mcp.gateway import plain_tool_result as ptr
from sentinel_mcp.gateway.unspanned_kernel import UnspannedRunner
from tests.policy.test_lazy_proofs import HOSTILE

VERSIONS = sorted({v for (m, v) in _methods.SERVER_RESULTS if m == "tools/call"})
SERVER_INFO = "io.modelcontextprotocol/serverInfo"


def texts(rng: random.Random) -> str:
    return rng.choice([*HOSTILE[:30], "", "ok", "a\u0000b", "é" * 50, "\U0001f600", "x" * 3000])


def value(rng: random.Random, depth: int = 0) -> Any:
    kinds = ["text", "int", "float", "bool", "null", "list", "object"]
    if depth >= 3:
        kinds = ["text", "int", "null"]
    kind = rng.choice(kinds)
    if kind == "text":
        return texts(rng)
    if kind == "int":
        return rng.choice([0, -1, 2**53 + 1, 10**30, 7])
    if kind == "float":
        return rng.choice([0.5, -1e300, 1e-7, 3.0])
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "null":
        return None
    if kind == "list":
        return [value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {texts(rng)[:20] or "k": value(rng, depth + 1) for _ in range(rng.randint(0, 3))}


def block(rng: random.Random, plain: bool) -> Any:
    if plain or rng.random() < 0.6:
        return TextContent(type="text", text=texts(rng))
    return rng.choice([
        lambda: TextContent(type="text", text="t", annotations=Annotations(audience=["user"], priority=0.5)),
        lambda: TextContent(type="text", text="t", _meta={"a": 1}),
        lambda: ImageContent(type="image", data="aGk=", mime_type="image/png"),
        lambda: AudioContent(type="audio", data="aGk=", mime_type="audio/wav"),
        lambda: ResourceLink(type="resource_link", uri="file:///x", name="x"),
        lambda: EmbeddedResource(type="resource", resource=TextResourceContents(uri="file:///x", text="x")),
    ])()


def result(rng: random.Random) -> CallToolResult:
    plain = rng.random() < 0.5
    fields: dict[str, Any] = {"content": [block(rng, plain) for _ in range(rng.randint(0, 3))]}
    if rng.random() < 0.5:
        fields["structured_content"] = {texts(rng)[:10] or "k": value(rng) for _ in range(rng.randint(0, 4))}
    if rng.random() < 0.5:
        fields["is_error"] = rng.random() < 0.5
    if rng.random() < 0.6:
        meta = {f"sentinel/{texts(rng)[:8]}": value(rng) for _ in range(rng.randint(0, 3))}
        if rng.random() < 0.15:
            meta[SERVER_INFO] = rng.choice([None, {"name": "handler's", "version": "1"}])
        if rng.random() < 0.1:
            meta["n"] = None
        fields["meta"] = meta
    out = CallToolResult(**fields)
    odd = rng.random()
    if odd < 0.05:  # what a model_copy(update=...) may leave: never validated
        out = out.model_copy(update={"meta": {1: "not a text key", "a": "b"}})
    elif odd < 0.1:
        out = out.model_copy(update={"structured_content": {2: "x"}})
    elif odd < 0.15:
        out = out.model_copy(update={"result_type": rng.choice(["input_required", "other", None])})
    elif odd < 0.2:
        out = out.model_copy(update={"structured_content": ["a list", 1]})
    elif odd < 0.22:
        out = out.model_copy(update={"is_error": "yes"})
    return out


def runners(version: str) -> tuple[ServerRunner[Any], ServerRunner[Any]]:
    server: Any = Server("s", version="9")
    connection = Connection.from_envelope(version, None, {})
    return UnspannedRunner(server, connection, None), ServerRunner(server, connection, None)


def shaped(runner: ServerRunner[Any], version: str, r: Any) -> Any:
    try:
        return ("ok", json.dumps(runner._serialize("tools/call", version, r)))
    except MCPError as e:
        return ("mcp error", e.error.code, e.error.message)
    except Exception as e:  # noqa: BLE001 - compared: the same kind of failure
        return ("raised", type(e).__name__)


@pytest.mark.parametrize("version", VERSIONS)
def test_the_shaping_is_the_sdks_byte_for_byte(version: str) -> None:
    rng = random.Random(f"2121-{version}")
    ours, sdk = runners(version)
    plain = 0
    for i in range(600):
        r = result(rng)
        try:
            plain += ptr.plain_tool_result(r, version) is not None
        except UnicodeEncodeError:  # a lone surrogate: the SDK's dump raises it alike (compared below)
            pass
        assert shaped(ours, version, r) == shaped(sdk, version, r), (i, r)
    assert 150 <= plain <= 550, plain  # both paths taken


def test_results_the_plain_path_never_takes() -> None:
    for version in VERSIONS:
        for r in (
            CallToolResult(content=[ImageContent(type="image", data="aGk=", mime_type="image/png")]),
            CallToolResult(content=[TextContent(type="text", text="t", _meta={"a": 1})]),
            CallToolResult(content=[], meta={SERVER_INFO: {"name": "x", "version": "1"}}),
            CallToolResult(content=[], meta={"a": None}),
            CallToolResult(content=[]).model_copy(update={"result_type": "input_required"}),
            CallToolResult(content=[]).model_copy(update={"result_type": None}),
            CallToolResult(content=[]).model_copy(update={"structured_content": ["a list"]}),
            {"content": []},
            None,
        ):
            assert ptr.plain_tool_result(r, version) is None, (version, r)
    assert ptr.plain_tool_result(CallToolResult(content=[]), "1999-01-01") is None  # no such surface


def test_a_subclass_is_left_to_the_sdk() -> None:
    class Mine(CallToolResult):
        pass

    assert ptr.plain_tool_result(Mine(content=[]), VERSIONS[-1]) is None


@pytest.mark.parametrize("depth", [100, 254, 255, 256, 300, 5000])
def test_deep_structured_content_fails_or_passes_alike(depth: int) -> None:
    """Nesting near and past pydantic's serialization depth: the same answer or the same refusal."""
    nested: Any = "x"
    for _ in range(depth):
        nested = {"a": [nested]} if depth % 2 else {"a": nested}
    r = CallToolResult(content=[TextContent(type="text", text="t")], structured_content={"d": nested})
    for version in VERSIONS:
        ours, sdk = runners(version)
        assert shaped(ours, version, r) == shaped(sdk, version, r), (depth, version)


class _Text(str):
    pass


def test_results_changed_without_validation_are_shaped_alike() -> None:
    """What a model_copy(update=...) may put where the model would not: a block as a plain dict, a text of a
    str subclass, a tuple or bytes as values, an integer for a flag: the same answer or the same failure."""
    base = CallToolResult(content=[TextContent(type="text", text="t")])
    cases = [
        base.model_copy(update={"content": [{"type": "text", "text": "x"}]}),
        base.model_copy(update={"content": [TextContent.model_construct(type="text", text=_Text("x"))]}),
        base.model_copy(update={"meta": {"a": (1, 2)}}),
        base.model_copy(update={"structured_content": {"a": b"\xff"}}),
        base.model_copy(update={"is_error": 1}),
    ]
    for version in VERSIONS:
        ours, sdk = runners(version)
        for r in cases:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # pydantic's serializer warns about the unexpected types
                assert shaped(ours, version, r) == shaped(sdk, version, r), (version, r)
