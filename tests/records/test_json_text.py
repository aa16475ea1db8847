"""The encoders built once (``core/json_text.py``: audit rows' hashed text, the lean path's answers, sealed
states, envelope keys) write what ``json.JSONEncoder`` with the same options writes, byte for byte: an old row
keeps verifying, a client reads the same answer; and refuse what it refuses."""

from __future__ import annotations

import json
import random
from collections import OrderedDict
from typing import Any

import pytest

from sentinel_mcp.core.json_text import compact_encoder

OPTIONS = [dict(separators=(",", ":"), ensure_ascii=e, sort_keys=s)
           for e in (True, False) for s in (True, False)]
OPTIONS.append(dict(separators=(", ", ": "), ensure_ascii=True, sort_keys=False))
# strict: a NaN or an infinity refused (ValueError), as the stdio lean path's answers are written
OPTIONS += [dict(separators=(",", ":"), ensure_ascii=e, sort_keys=False, allow_nan=False)
            for e in (True, False)]

VALUES: list[Any] = [
    "plain", "é \u2028 日本", "\ud800 lone", "", "\x00\x1f\"\\/", 0, -1, 10**40, 1.5, -0.0, 1e-300, 1e308,
    0.1 + 0.2, float("nan"), float("inf"), True, False, None, [], {}, (), OrderedDict(b=1, a=2),
    {"b": [1, {"z": None, "a": "x"}], "a": ("t", 2.5), 3: "int key", 1.5: "float key", None: "null key",
     True: "bool key"},
    ("main", 1764690000.123, "id", None, "{}", 0.123, '{"ask": 0.0}'),
    {"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": "ok"}], "isError": False}},
]


def _random(rng: random.Random, depth: int = 0) -> Any:
    if depth > 4 or rng.random() < 0.4:
        return rng.choice(VALUES[:18] + [rng.random() * 10 ** rng.randrange(-30, 30),
                                         rng.randrange(-10**20, 10**20)])
    if rng.random() < 0.5:
        return [_random(rng, depth + 1) for _ in range(rng.randrange(4))]
    keys = ["a", "b", "é", "\ud800", "z", "0"]
    return {rng.choice(keys): _random(rng, depth + 1) for _ in range(rng.randrange(4))}


def _outcome(encode: Any, value: Any) -> tuple[str, Any]:
    try:
        return "text", encode(value)
    except Exception as e:  # noqa: BLE001 - the same refusal is part of the same behaviour
        return "refused", type(e)


@pytest.mark.parametrize("options", OPTIONS)
def test_the_text_is_what_the_encoder_writes(options: dict[str, Any]) -> None:
    encode, plain = compact_encoder(**options), json.JSONEncoder(**options)
    rng = random.Random(21)
    outcomes = set()
    for value in VALUES + [_random(rng) for _ in range(2000)]:
        got = _outcome(encode, value)
        assert got == _outcome(plain.encode, value), value
        outcomes.add(got[0])
    # mixed keys are unsortable; NaN and the infinities are refused when strict
    assert outcomes == ({"text", "refused"} if options["sort_keys"] or options.get("allow_nan") is False
                        else {"text"})


def test_a_strict_encoder_refuses_what_json_refuses_and_writes_the_rest() -> None:
    encode = compact_encoder(allow_nan=False)
    for value in (float("nan"), [1, float("inf")], {"a": {"b": -float("inf")}}):
        with pytest.raises(ValueError):
            encode(value)
        with pytest.raises(ValueError):
            json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode(value)
    assert encode({"a": [1.5, 1e308, -0.0]}) == '{"a":[1.5,1e+308,-0.0]}'


@pytest.mark.parametrize("options", OPTIONS)
def test_what_the_encoder_refuses_is_refused(options: dict[str, Any]) -> None:
    encode = compact_encoder(**options)
    for value in ({"a": {1, 2}}, [object()], {(1, 2): "tuple key"}, b"bytes"):
        with pytest.raises(TypeError):
            encode(value)
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(RecursionError):
        encode(deep)
