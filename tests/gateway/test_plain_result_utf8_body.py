"""A lean HTTP answer whose bytes cannot hold a surrogate skips the walk of its texts
(``plain_upstream_result.surrogate_free``, ``plain_call_result(..., utf8_texts=True)``): sound - whenever the
scan says so, every text (keys too) of what ``json.loads`` makes of the bytes encodes as UTF-8, over many
spellings of a lone surrogate (escapes in either case, encoded surrogate bytes, UTF-16 and UTF-32 bodies
with and without a byte order mark, a UTF-8 byte order mark) and over generated bodies; the model built with
the skip is the model built without it, over generated results in every protocol version; and end to end,
a lean call's answer holding a lone surrogate is refused as the SDK's client refuses it."""

from __future__ import annotations

import codecs
import json
import random
from typing import Any

import anyio
import pytest

from sentinel_mcp.gateway.plain_upstream_result import plain_call_result, surrogate_free
from sentinel_mcp.gateway.result_shape import ResultRefused, check_shape
from tests.gateway.hostile_http_upstream import TEXTS
from tests.gateway.test_lean_upstream import _attacks, _with_upstream, hostile  # noqa: F401 - its fixture
from tests.gateway.test_plain_upstream_result import VERSIONS, raw_result


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in _texts(k) + _texts(v)]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    return []


def _all_utf8(value: Any) -> bool:
    try:
        for text in _texts(value):
            text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _bodies_with_a_surrogate() -> list[bytes]:
    lone = {"content": [{"type": "text", "text": "a\ud800b"}]}
    key = {"structuredContent": {"\udfff": 1}}
    bodies = []
    for value in (lone, key):
        bodies.append(json.dumps(value).encode())  # ensure_ascii: \ud800
        bodies.append(json.dumps(value).replace("\\ud", "\\uD").encode())  # upper-case hex
        bodies.append(json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass"))  # ED A0 80
        for codec in ("utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be"):
            bodies.append(json.dumps(value, ensure_ascii=False).encode(codec, "surrogatepass"))
        bodies.append(codecs.BOM_UTF8 + json.dumps(value).encode())
    return bodies


@pytest.mark.parametrize("body", _bodies_with_a_surrogate())
def test_every_spelling_of_a_surrogate_takes_the_walk(body: bytes) -> None:
    parsed = json.loads(body)
    assert not _all_utf8(parsed)  # the body does hold one (json.loads reads every spelling)
    assert not surrogate_free(body)


def _string(rng: random.Random) -> str:
    pool = ["a", "é", "\u4e2d", "\U0001f600", "\ud7ff", "\ue000", "\\", '"', "u", "\ud800", "\udc00", "\x00",
            "\ud83d", "\ude00"]
    return "".join(rng.choice(pool) for _ in range(rng.randint(0, 6)))


def _value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.random()
    if depth > 3 or kind < 0.4:
        return rng.choice([_string(rng), 1, 2.5, True, None])
    if kind < 0.7:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {_string(rng): _value(rng, depth + 1) for _ in range(rng.randint(0, 3))}


def test_the_scan_is_sound_over_generated_bodies() -> None:
    """Whenever ``surrogate_free`` says so, every text of the parsed body encodes as UTF-8; bodies in every
    encoding ``json.loads`` reads, escaped or not."""
    rng = random.Random(21)
    said_free = held_one = 0
    for _ in range(4000):
        value = {"content": [{"type": "text", "text": _string(rng)}], "structuredContent": _value(rng)}
        text = json.dumps(value, ensure_ascii=rng.random() < 0.3)
        codec = rng.choice(["utf-8", "utf-8", "utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-32-be"])
        body = text.encode(codec, "surrogatepass")
        try:
            parsed = json.loads(body)
        except ValueError:
            continue
        free = surrogate_free(body)
        assert not free or _all_utf8(parsed), body
        said_free += free
        held_one += not _all_utf8(parsed)
    assert said_free > 200 and held_one > 500  # both kinds were generated


@pytest.mark.parametrize("version", VERSIONS)
def test_the_model_is_the_same_with_the_skip(version: str) -> None:
    """Over generated results (plain and nearly plain), for every body the scan passes: the same model (the
    same dump and fields set) or the same None as with the walk."""
    rng = random.Random(f"utf8-{version}")
    same = 0
    for _ in range(1500):
        raw = raw_result(rng, version)
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "result": raw}, ensure_ascii=False).encode(
            "utf-8", "surrogatepass")
        if not surrogate_free(body):
            continue
        parsed = json.loads(body)["result"]
        try:
            check_shape("tools/call", parsed)  # as the lean call does first
        except ResultRefused:
            continue
        walked = plain_call_result(version, json.loads(body)["result"])
        skipped = plain_call_result(version, parsed, utf8_texts=True)
        if walked is None:
            assert skipped is None
            continue
        assert skipped is not None
        assert skipped.model_dump(by_alias=True) == walked.model_dump(by_alias=True)
        assert skipped.model_fields_set == walked.model_fields_set
        same += 1
    assert same > 100


def test_lean_answers_with_and_without_surrogates_are_the_sdks(hostile: str) -> None:  # noqa: F811
    """End to end over streamable HTTP: results whose texts hold a lone surrogate (escaped or as encoded
    bytes, in a text, a key or a value) and clean ones (one with a 0xED lead byte): the lean path's outcome
    for each is the SDK client's (the same error kind, or the same result). On main the lean path passed
    three of the four with their lone surrogate (only the key was refused): the SDK refuses them all."""
    names = sorted(TEXTS)
    lean = anyio.run(lambda: _with_upstream(hostile, lambda up: _attacks(up, names)))
    sdk = anyio.run(lambda: _with_upstream(hostile, lambda up: _attacks(up, names, 10.0), lean=False))
    for name, (kind, said), (sdk_kind, sdk_said) in zip(names, lean, sdk):
        assert kind == sdk_kind, (name, said, sdk_said)
        assert kind == ("result" if name.startswith("clean") else "error"), (name, said)
        if kind == "result":
            assert said == sdk_said, name
