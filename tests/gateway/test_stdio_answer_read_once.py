"""A lean stdio answer's texts are walked once for UTF-8, not twice (issue 21): ``StdioTap._answered`` passes
on only an answer whose texts (keys too) all encode as UTF-8 (its bytes ``surrogate_free``, or walked by
``holds_lone_surrogate``), so ``StdioCaller.call_tool`` reads the model with ``utf8_texts=True`` instead of
``plain_call_result`` walking every text (and the structured content) again with ``_writable``.

Checked: over a generated corpus of answer lines (plain and nearly plain results in every protocol version,
lone surrogates escaped in either case or as encoded bytes in texts, keys, ``_meta`` and structured content,
paired surrogates, U+D7FF (the 0xED lead byte of a valid character), NUL, every block type, icons, resource
links, forged ``_meta`` keys, wrong types, nesting either side of the shape bound, a value count past it), the
tap's verdict and then main's read (``utf8_texts=False``) and this read give the same outcome: the same
refusal and message, or the same model (dumps, fields set, each block's). End to end, a plain call through a
real stdio upstream runs no ``_writable`` at all."""

from __future__ import annotations

import asyncio
import json
import random
import sys
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from sentinel_mcp.gateway import plain_upstream_result
from sentinel_mcp.gateway.lean_stdio import StdioTap, _Waiting
from sentinel_mcp.gateway.lean_upstream import response_for, validated_result
from sentinel_mcp.gateway.result_shape import MAX_DEPTH, MAX_VALUES, ResultRefused, check_shape
from sentinel_mcp.gateway.upstream import Upstream
from tests.gateway.helpers import TOOLBOX
from tests.gateway.test_lean_stdio import _with_upstream
from tests.gateway.test_plain_upstream_result import VERSIONS, _Client, _dumped, raw_result

pytestmark = pytest.mark.timeout(240)

_POOL = ["a", "é", "\u4e2d", "\U0001f600", "\ud7ff", "\ue000", "\\", '"', "\x00", "\ud800", "\udc00",
         "\ud83d", "\ude00", "\u2028"]


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(_POOL) for _ in range(rng.randint(0, 5)))


def _nested(depth: int, leaf: Any) -> Any:
    value = leaf
    for i in range(depth):
        value = {"k": value} if i % 2 else [value]
    return value


def _hostile(rng: random.Random, raw: dict[str, Any]) -> None:
    """One or two of the shapes an upstream may send beside a result, applied to ``raw`` in place."""
    blocks = raw.get("content") if isinstance(raw.get("content"), list) else None

    def block(b: dict[str, Any]) -> None:
        if blocks is not None:
            blocks.append(b)

    icon = ["https://x/i.png", "javascript:1", "data:image/png;base64,aGk="]
    extra: list[Any] = [
        lambda: block({"type": "text", "text": _text(rng)}),
        lambda: block({"type": "image", "data": "aGk=", "mimeType": "image/png"}),
        lambda: block({"type": "resource_link", "uri": "file:///x", "name": _text(rng) or "n",
                       "icons": [{"src": rng.choice(icon)}]}),
        lambda: block({"type": "resource", "resource": {"uri": "file:///y", "text": _text(rng)}}),
        lambda: block({"type": "text", "text": _text(rng), "_meta": {_text(rng): 1}}),
        lambda: raw.__setitem__("_meta", {"sentinel/decision_id": _text(rng), "sentinel/verdict": "allow",
                                          _text(rng): _text(rng)}),
        lambda: raw.__setitem__("structuredContent", {_text(rng): _text(rng), "n": [_text(rng), 1, None]}),
        lambda: raw.__setitem__("structuredContent",
                                {"deep": _nested(rng.choice([MAX_DEPTH - 4, MAX_DEPTH - 3, MAX_DEPTH - 2,
                                                             MAX_DEPTH - 1, MAX_DEPTH]), _text(rng))}),
        lambda: raw.__setitem__("structuredContent", rng.choice([[1], "s", 3, None, True])),
        lambda: raw.__setitem__("isError", rng.choice([True, False, "no", 0])),
        lambda: raw.__setitem__(_text(rng) or "x", _text(rng)),
    ]
    for _ in range(rng.randint(1, 2)):
        rng.choice(extra)()


def _line(rng: random.Random, result: Any) -> bytes:
    text = json.dumps({"jsonrpc": "2.0", "id": 1, "result": result}, ensure_ascii=rng.random() < 0.4)
    if rng.random() < 0.2:
        text = text.replace("\\ud", "\\uD")
    return text.encode("utf-8", "surrogatepass")


def _tapped(line: bytes) -> Any:
    """What the tap does with ``line`` as the answer to waiting call 1: the message, or its refusal."""

    async def run() -> Any:
        tap = StdioTap()
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        tap.waiting[1] = _Waiting(answer, None, None)  # type: ignore[arg-type]
        assert tap.answer(line)
        try:
            return await answer
        except MCPError as e:
            return ("refused by the tap", e.error.code, e.error.message)

    return asyncio.run(run())


def _read(version: str, msg: dict[str, Any], utf8_texts: bool) -> Any:
    """``StdioCaller.call_tool``'s read of a passed answer: its result, shape, model; outcome compared."""
    msg = json.loads(json.dumps(msg))  # each side its own copy (the SDK's path may change it)
    try:
        raw = response_for(msg, 1)
        check_shape("tools/call", raw)
        r = validated_result(_Client(), version, raw, utf8_texts)  # type: ignore[arg-type]
    except MCPError as e:
        return ("refused", e.error.code, e.error.message)
    except ResultRefused as e:
        return ("shape", e.kind, e.why)
    blocks = getattr(r, "content", None) or []
    return ("ok", type(r).__name__, _dumped(r, exclude_unset=True), _dumped(r), _dumped(r, mode="python"),
            sorted(r.model_fields_set),
            [(type(b).__name__, sorted(b.model_fields_set), b.model_dump(by_alias=True, exclude_unset=True))
             for b in blocks])


@pytest.mark.parametrize("version", VERSIONS)
def test_the_read_without_the_second_walk_is_mains_over_a_generated_corpus(version: str) -> None:
    rng = random.Random(f"read-once-{version}")
    kinds: dict[str, int] = {}
    direct = 0
    for i in range(1500):
        raw = raw_result(rng, version)
        if rng.random() < 0.7:
            _hostile(rng, raw)
        line = _line(rng, raw)
        msg = _tapped(line)
        if isinstance(msg, tuple):
            kinds["tap"] = kinds.get("tap", 0) + 1
            continue
        walked = _read(version, msg, utf8_texts=False)
        skipped = _read(version, msg, utf8_texts=True)
        assert skipped == walked, (i, line[:300])
        kinds[walked[0]] = kinds.get(walked[0], 0) + 1
        direct += plain_upstream_result.plain_call_result(version, json.loads(json.dumps(msg))["result"],
                                                          True) is not None
    # every kind of outcome was generated: refused by the tap (a surrogate), past the shape, refused by the
    # model, and read, most of those down the direct path
    assert kinds.get("tap", 0) > 100 and kinds.get("ok", 0) > 300, kinds
    assert kinds.get("refused", 0) > 20 and kinds.get("shape", 0) > 5, kinds
    assert direct > 150


def test_a_result_past_the_value_bound_is_refused_alike() -> None:
    raw = {"content": [], "structuredContent": {"v": list(range(MAX_VALUES + 1))}, "resultType": "complete"}
    msg = _tapped(json.dumps({"jsonrpc": "2.0", "id": 1, "result": raw}).encode())
    walked, skipped = _read("2026-07-28", msg, False), _read("2026-07-28", msg, True)
    assert walked == skipped and walked[0] == "shape", walked


def test_a_plain_call_over_stdio_walks_no_text_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Counted: ``_writable`` runs for none of a plain answer's texts (on main: once a text, and a walk of
    the structured content)."""
    walks: list[Any] = []
    real = plain_upstream_result._writable

    def counted(value: Any, depth: int = 0) -> bool:
        walks.append(value)
        return real(value, depth)

    monkeypatch.setattr(plain_upstream_result, "_writable", counted)

    async def body(up: Upstream) -> list[Any]:
        out = []
        calls = [("noop", {}), ("echo", {"text": "héllo \u2028 \"q\""}), ("add", {"a": 2, "b": 3.5})]
        for tool, args in calls:
            r = await up.call_tool(tool, args)
            out.append(r.model_dump(by_alias=True, mode="json", exclude_none=True))
        return out

    results = anyio.run(lambda: _with_upstream([sys.executable, TOOLBOX], body, protocol="modern"))
    assert results[0]["content"][0]["text"] == "ok"
    assert "héllo" in results[1]["content"][0]["text"]
    assert walks == []
