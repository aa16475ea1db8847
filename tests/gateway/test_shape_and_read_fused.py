"""A lean ``tools/call`` result's shape bounds and its plain read in one pass, not two (issue 21): on main
the lean paths ran ``result_shape.check_shape`` (a walk of the whole result) and then ``plain_call_result``
(a loop over the same blocks); now ``validated_result(..., bound=True)`` reads a plain result with
``plain_call_result(..., bound=True)``, which checks the block count and each text's length in its own loop
and walks only the structured content and ``_meta`` (``past_bounds``, the walk ``check_shape`` uses, from
where they sit); anything it declines goes to ``check_shape`` and the SDK's passes as before.

Checked against main's two functions (copies below, as they stood at the fork): over a generated corpus of
results in every protocol version, plain and nearly plain, with hostile blocks and every bound crossed or just
met (blocks 1,000 / 1,001, a text of the bound's length and one more, values at the bound and one past it in
the structured content, in ``_meta`` and with blocks beside, nesting either side of the depth bound in both),
main's ``check_shape`` then ``plain_call_result`` and this pass give the same refusal (kind and words) or the
same model (dumps, fields set, each block's) or both decline; and through ``validated_result`` the same
outcome as main's call sites. End to end, a plain call over stdio and over streamable HTTP runs no
``check_shape`` (on main: one a call)."""

from __future__ import annotations

import json
import random
import sys
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from sentinel_mcp.gateway import lean_upstream, plain_upstream_result, result_shape
from sentinel_mcp.gateway.plain_upstream_result import _construct_block, _construct_result, plain_call_result
from sentinel_mcp.gateway.result_shape import (
    BLOCK_LISTS,
    MAX_CONTENT_BLOCKS,
    MAX_DEPTH,
    MAX_TEXT_CHARS,
    MAX_VALUES,
    ResultRefused,
    too_many_blocks,
)
from sentinel_mcp.gateway.upstream import Upstream
from tests.gateway.helpers import TOOLBOX
from tests.gateway.test_plain_upstream_result import VERSIONS, _Client, _dumped, raw_result
from tests.gateway.test_stdio_answer_read_once import _hostile, _nested

pytestmark = pytest.mark.timeout(300)


# ---- main's two passes, as they stood at the fork point (c6bb5127) ---------------------------------------

def _main_walk(raw: dict[str, Any]) -> str | None:
    values, depth = 0, 1
    level: list[Any] = [raw]
    while level:
        below: list[Any] = []
        for value in level:
            values += len(value)
            if values > MAX_VALUES:
                return f"it answered more than {MAX_VALUES:,} values in one result"
            for item in value.values() if type(value) is dict else value:
                t = type(item)
                if t is str:
                    if len(item) > MAX_TEXT_CHARS:
                        return (f"it answered a text of {len(item):,} characters, "
                                f"more than {MAX_TEXT_CHARS:,}")
                elif t is dict or t is list:
                    below.append(item)
        if below and depth >= MAX_DEPTH:
            return f"it answered values nested more than {MAX_DEPTH} deep"
        level, depth = below, depth + 1
    return None


def _main_check_shape(method: str, raw: Any) -> None:
    if not isinstance(raw, dict):
        return
    listed = BLOCK_LISTS.get(method)
    if listed is not None:
        blocks = raw.get(listed[0])
        if isinstance(blocks, list):
            why = too_many_blocks(len(blocks), listed[1])
            if why is not None:
                raise ResultRefused(why, "result_blocks")
    why = _main_walk(raw)
    if why is not None:
        raise ResultRefused(why, "result_shape")


def _main_writable(value: Any, depth: int = 0) -> bool:
    t = type(value)
    if t is str:
        if value.isascii():
            return True
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    if t is dict:
        return depth < 64 and all(_main_writable(k, depth) and _main_writable(v, depth + 1)
                                  for k, v in value.items())
    if t is list:
        return depth < 64 and all(_main_writable(v, depth + 1) for v in value)
    return True


_KEYS = frozenset({"content", "structuredContent", "isError", "_meta", "resultType"})


def _main_plain(era: str, raw: Any, utf8_texts: bool = False) -> CallToolResult | None:
    walk = not utf8_texts
    if type(raw) is not dict or not raw.keys() <= _KEYS:
        return None
    kind = raw.get("resultType")
    if era in MODERN_PROTOCOL_VERSIONS:
        if kind != "complete" or type(kind) is not str:
            return None
    elif "resultType" in raw and (kind != "complete" or type(kind) is not str):
        return None
    content = raw.get("content")
    if type(content) is not list:
        return None
    blocks: list[TextContent] = []
    for b in content:
        if type(b) is not dict or len(b) != 2 or b.get("type") != "text":
            return None
        text = b.get("text")
        if type(text) is not str or type(b["type"]) is not str or (walk and not _main_writable(text)):
            return None
        blocks.append(_construct_block({"type", "text"}, type="text", text=text))
    fields: dict[str, Any] = {"content": blocks}
    if "structuredContent" in raw:
        structured = raw["structuredContent"]
        if type(structured) is not dict or (walk and not _main_writable(structured)):
            return None
        fields["structured_content"] = raw["structuredContent"]
    if "isError" in raw:
        if type(raw["isError"]) is not bool:
            return None
        fields["is_error"] = raw["isError"]
    if "_meta" in raw:
        meta = raw["_meta"]
        if meta is not None and (type(meta) is not dict or (walk and not _main_writable(meta))):
            return None
        fields["meta"] = meta
    if era in MODERN_PROTOCOL_VERSIONS:
        fields["result_type"] = "complete"
    return _construct_result(set(fields), **fields)  # type: ignore[no-any-return]


# ---- the corpus ------------------------------------------------------------------------------------------

def _blocks(n: int, text: str = "t") -> list[dict[str, Any]]:
    return [{"type": "text", "text": text} for _ in range(n)]


def _at_bounds(version: str) -> list[dict[str, Any]]:
    """Results that meet each bound exactly and cross it by one, plain otherwise."""
    done = {"resultType": "complete"} if version in MODERN_PROTOCOL_VERSIONS else {}
    out: list[dict[str, Any]] = []
    for n in (MAX_CONTENT_BLOCKS, MAX_CONTENT_BLOCKS + 1):
        out.append({"content": _blocks(n), **done})
    for n in (MAX_TEXT_CHARS, MAX_TEXT_CHARS + 1):
        big = "x" * n
        out.append({"content": [{"type": "text", "text": big}], **done})
        out.append({"content": [], "structuredContent": {"t": [1, big]}, **done})
        out.append({"content": [], "_meta": {"t": big}, **done})
    for k in (0, 3):  # blocks beside count too
        for extra in (0, 1):
            for where in ("structuredContent", "_meta", "both"):
                raw: dict[str, Any] = {"content": _blocks(k), **done}
                # the walk's count: raw's entries, each block and its two fields, the containers' own
                keys = len(raw) + (2 if where == "both" else 1)
                left = MAX_VALUES + extra - keys - 3 * k - (2 if where == "both" else 1)
                if where == "both":
                    raw["structuredContent"] = {"v": list(range(left - 5))}
                    raw["_meta"] = {"w": [0] * 4}
                else:
                    raw[where] = {"v": list(range(left))}
                out.append(raw)
    for depth in range(MAX_DEPTH - 4, MAX_DEPTH + 2):
        for where in ("structuredContent", "_meta"):
            out.append({"content": _blocks(1), where: {"d": _nested(depth, "leaf")}, **done})
            out.append({"content": _blocks(1), where: {"d": _nested(depth, [])}, **done})
    return out


def _corpus(version: str, seed: int, n: int) -> list[Any]:
    rng = random.Random(f"{version}-{seed}")
    out: list[Any] = _at_bounds(version)
    for _ in range(n):
        raw: Any = raw_result(rng, version)
        if rng.random() < 0.5:
            _hostile(rng, raw)
        if rng.random() < 0.03:
            raw = rng.choice([None, [], "result", 3, [raw]])
        out.append(raw)
    return out


def _model(r: Any) -> Any:
    if r is None:
        return None
    blocks = getattr(r, "content", None) or []
    return (type(r).__name__, _dumped(r, exclude_unset=True), _dumped(r), _dumped(r, mode="python"),
            sorted(r.model_fields_set),
            [(type(b).__name__, sorted(b.model_fields_set), b.model_dump(by_alias=True, exclude_unset=True))
             for b in blocks])


def _main_pair(version: str, raw: Any, utf8_texts: bool) -> Any:
    try:
        _main_check_shape("tools/call", raw)
    except ResultRefused as e:
        return ("shape", e.kind, e.why)
    return ("read", _model(_main_plain(version, raw, utf8_texts)))


def _fused(version: str, raw: Any, utf8_texts: bool) -> Any:
    """The branch's call site: the one pass; what it declines, ``check_shape`` and (for the model) None."""
    r = plain_call_result(version, raw, utf8_texts, bound=True)
    if r is not None:
        return ("read", _model(r))
    try:
        result_shape.check_shape("tools/call", raw)
    except ResultRefused as e:
        return ("shape", e.kind, e.why)
    return ("read", None)


@pytest.mark.parametrize("version", VERSIONS)
def test_one_pass_is_mains_shape_check_then_plain_read(version: str) -> None:
    outcomes: set[str] = set()
    for i, raw in enumerate(_corpus(version, 1, 1500)):
        for utf8_texts in (False, True):
            want, got = _main_pair(version, raw, utf8_texts), _fused(version, raw, utf8_texts)
            assert got == want, (i, utf8_texts, str(raw)[:300])
            outcomes.add(want[0] if want[0] == "shape" else ("model" if want[1] else "declined"))
    assert outcomes == {"shape", "model", "declined"}, outcomes  # the corpus reaches every outcome


def test_no_model_is_built_for_a_result_past_a_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """As ``check_shape`` first: the one pass builds no block and no result for a result past a bound, even
    with plain blocks before the text or the structured content that crosses it."""
    built: list[Any] = []
    for name in ("_construct_block", "_construct_result"):
        real = getattr(plain_upstream_result, name)
        monkeypatch.setattr(plain_upstream_result, name,
                            lambda *a, _real=real, **kw: (built.append(a), _real(*a, **kw))[1])
    refused = 0
    for version in ("2026-07-28", "2025-11-25"):
        long_last = {"content": _blocks(3) + [{"type": "text", "text": "x" * (MAX_TEXT_CHARS + 1)}]}
        for raw in [*_at_bounds(version), long_last]:
            try:
                _main_check_shape("tools/call", raw)
            except ResultRefused:
                refused += 1
                assert plain_call_result(version, raw, True, bound=True) is None
                assert built == [], str(raw)[:200]
    assert refused >= 20


def _through(version: str, raw: Any, utf8_texts: bool, fused: bool) -> Any:
    """Main's call site (``check_shape`` then ``validated_result``) or this one (``bound=True``)."""
    raw = json.loads(json.dumps(raw))  # each side its own copy (the SDK's path may change it)
    try:
        if fused:
            r = lean_upstream.validated_result(_Client(), version, raw, utf8_texts, bound=True)  # type: ignore[arg-type]
        else:
            _main_check_shape("tools/call", raw)
            r = lean_upstream.validated_result(_Client(), version, raw, utf8_texts)  # type: ignore[arg-type]
    except MCPError as e:
        return ("refused", e.error.code, e.error.message)
    except ResultRefused as e:
        return ("shape", e.kind, e.why)
    return ("ok", _model(r))


@pytest.mark.parametrize("version", VERSIONS)
def test_validated_result_bound_is_mains_call_site(version: str) -> None:
    outcomes: set[str] = set()
    for i, raw in enumerate(_corpus(version, 2, 400)):
        if type(raw) is not dict:
            continue  # the call sites' ``response_for`` hands on a dict's value; main's read takes no other
        for utf8_texts in (False, True):
            want = _through(version, raw, utf8_texts, fused=False)
            assert _through(version, raw, utf8_texts, fused=True) == want, (i, utf8_texts, str(raw)[:300])
            outcomes.add(want[0])
    assert outcomes == {"ok", "refused", "shape"}, outcomes


def test_a_plain_result_is_not_walked_by_check_shape_and_others_are(monkeypatch: pytest.MonkeyPatch) -> None:
    """Counted at the function: the one pass runs no ``check_shape`` for a plain result; a result it declines
    (an image block, one past a bound) still gets it."""
    seen: list[Any] = []
    real = lean_upstream.check_shape
    monkeypatch.setattr(lean_upstream, "check_shape", lambda m, raw: (seen.append(raw), real(m, raw)))
    plain = {"content": _blocks(3), "structuredContent": {"a": [1, 2]}, "resultType": "complete"}
    lean_upstream.validated_result(_Client(), "2026-07-28", plain, True, bound=True)  # type: ignore[arg-type]
    assert seen == []
    image = {"content": [{"type": "image", "data": "aGk=", "mimeType": "image/png"}],
             "resultType": "complete"}
    lean_upstream.validated_result(_Client(), "2026-07-28", image, True, bound=True)  # type: ignore[arg-type]
    many = {"content": _blocks(MAX_CONTENT_BLOCKS + 1), "resultType": "complete"}
    with pytest.raises(ResultRefused):
        lean_upstream.validated_result(_Client(), "2026-07-28", many, True, bound=True)  # type: ignore[arg-type]
    assert seen == [image, many]


CALLS = [("noop", {}), ("echo", {"text": "héllo \u2028 \"q\""}), ("add", {"a": 2, "b": 3.5})]


def _counted_shape_checks(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every ``check_shape`` any lean path's module holds, counted (main's lean_stdio held its own)."""
    from sentinel_mcp.gateway import lean_stdio

    seen: list[Any] = []
    real = result_shape.check_shape

    def counted(method: str, raw: Any) -> None:
        seen.append(raw)
        real(method, raw)

    for module in (lean_upstream, lean_stdio, result_shape):
        if hasattr(module, "check_shape"):
            monkeypatch.setattr(module, "check_shape", counted)
    return seen


async def _calls(up: Upstream) -> list[Any]:
    out = []
    for tool, args in CALLS:
        r = await up.call_tool(tool, args)
        out.append(r.model_dump(by_alias=True, mode="json", exclude_none=True))
    return out


def _check(results: list[Any]) -> None:
    assert results[0]["content"][0]["text"] == "ok"
    assert "héllo" in results[1]["content"][0]["text"]
    assert results[2]["structuredContent"] == {"total": 5.5, "terms": 2}


def test_plain_calls_over_stdio_run_no_separate_shape_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.gateway.test_lean_stdio import _with_upstream

    seen = _counted_shape_checks(monkeypatch)
    _check(anyio.run(lambda: _with_upstream([sys.executable, TOOLBOX], _calls, protocol="modern")))
    assert seen == []


@pytest.mark.parametrize("protocol", ["modern", "legacy"])
def test_plain_calls_over_http_run_no_separate_shape_walk(monkeypatch: pytest.MonkeyPatch,
                                                          protocol: str) -> None:
    from tests.gateway.test_lean_upstream import _serve, _with_upstream
    from tests.conftest import free_port, stop_process

    seen = _counted_shape_checks(monkeypatch)
    port = free_port()
    proc = _serve([sys.executable, TOOLBOX, "--http", str(port)], port)
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        _check(anyio.run(lambda: _with_upstream(url, _calls, protocol=protocol)))
    finally:
        stop_process(proc)
    assert seen == []
