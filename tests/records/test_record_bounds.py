"""The one bound on values kept in durable records (``core/record_bounds.py``): any hostile shape gives valid
JSON within the limits, saying it was cut and the hash of the full value; no shape recurses or hangs."""

from __future__ import annotations

import hashlib
import json

import pytest

from sentinel_mcp.core.record_bounds import (
    CUT_KEY,
    RecordLimits,
    bounded,
    bounded_json,
    canonical_digest,
    shallow,
    was_cut,
    within,
)

LIMITS = RecordLimits(chars=2000, string=200, items=20, depth=8)


def _deep(levels: int, kind: str = "list") -> object:
    root: object = "bottom"
    for _ in range(levels):
        root = [root] if kind == "list" else {"k": root}
    return root


HOSTILE = {
    "huge string": "A" * 2_000_000,
    "lone surrogates": "\ud800" * 100_000,
    "deep list": _deep(10_000),
    "deep object": _deep(10_000, "dict"),
    "many keys": {f"key{i}": i for i in range(100_000)},
    "long list": list(range(200_000)),
    "many short strings": ["ab"] * 100_000,
    "huge integer": 10 ** 20_000,
    "long keys": {"K" * 1_000_000: 1, "L" * 1_000_000: 2},
    "nested lists of long strings": [["x" * 10_000] * 50] * 50,
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_every_hostile_shape_is_stored_as_valid_bounded_json_with_the_full_hash(name: str) -> None:
    value = HOSTILE[name]
    text = bounded_json(value, LIMITS)
    stored = json.loads(text)
    assert len(text) < LIMITS.chars + 600, (name, len(text))
    assert was_cut(stored) and stored[CUT_KEY]["kept_chars"] <= LIMITS.chars
    assert stored[CUT_KEY]["full_sha256"] == canonical_digest(value)[0]
    assert bounded(value, LIMITS)[CUT_KEY] == stored[CUT_KEY]
    assert not within(value, LIMITS)


def test_the_hash_is_of_the_json_anyone_can_write_of_the_full_value() -> None:
    for value in [{"b": [1, 2.5, None, True, False], "a": "é\u2028\ud800"}, [], {}, "s", 0, -0.0, 1e300,
                  {"x": {"y": [{"z": []}]}}]:
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        assert canonical_digest(value) == (hashlib.sha256(text.encode()).hexdigest(), len(text))
    deep = _deep(5_000)  # deeper than json.dumps goes: hashed all the same, by a loop
    assert canonical_digest(deep)[1] == 2 * 5_000 + len('"bottom"')


def test_a_value_within_the_limits_is_kept_as_it_is() -> None:
    strings = [{"a": "[[[[[[[[[[[[[[[[[[[[ not nesting ]]]]"}, {"k": "\\\"[[[[[[[[[["}]
    for value in [*strings, [1, [2, [3]]], None]:
        assert within(value, LIMITS) and bounded(value, LIMITS) is value
        assert bounded_json(value, LIMITS) == json.dumps(value, sort_keys=True, ensure_ascii=True)
    assert not within(_deep(9), LIMITS)  # nine levels: one past the limit, however short


def test_shallow_cuts_only_what_recursion_cannot_take() -> None:
    small = {"a": [1, 2]}
    assert shallow(small, 8) is small
    cut = shallow(_deep(10_000), 8)
    assert json.dumps(cut) == "[" * 8 + "\"[cut: nested deeper than 8 levels]\"" + "]" * 8
    assert "integer" in json.dumps(shallow({"n": 10 ** 20_000}, 8))
