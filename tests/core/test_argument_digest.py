"""The argument digest binds a confirmation to its call: the text it hashes must be exactly the canonical JSON
(sorted keys, json's separators and escapes) whichever way it is written. A flat object is written directly
(``_flat_canonical``); it must be the encoder's text character for character, for hostile keys and values too,
and anything else must go to the encoder."""

from __future__ import annotations

import re

import enum
import hashlib
import json
import random
from typing import Any

import pytest

from sentinel_mcp.core.decision import _CANONICAL, _flat_canonical, argument_digest

TEXTS = ["", "a", "A", "é", "日本", "\u0000", "\n\t\r", '"', "\\", "\\u0041", "\ud800", "\udfff",
         "\ud83d\ude00", "😀", "\u2028", "\u202e", "\x7f", "\x1e\x1f", "'),halt,('", "{}", "[]", "null",
         "true", "1", " ", "~w",
         "q" * 5000, "\U0010ffff", "\ufeff", "Z" * 3 + "é" * 3]


class Level(enum.IntEnum):
    HIGH = 2


class Text(str):
    pass


def reference(arguments: Any) -> str:
    """The digest as it was always computed: the encoder's text."""
    return hashlib.sha256(_CANONICAL.encode(arguments or {}).encode()).hexdigest()


def test_flat_objects_are_written_as_the_encoder_writes_them() -> None:
    rng = random.Random(2131)
    ints = [0, 1, -1, 7, 2**63, -(2**70), 10**100]
    written = 0
    for _ in range(3000):
        keys = [
            rng.choice(TEXTS) if rng.random() < 0.6 else f"k{rng.randint(0, 9)}"
            for _ in range(rng.randint(0, 6))
        ]
        args: dict[str, Any] = {}
        for k in keys:
            args[k] = rng.choice([rng.choice(TEXTS), rng.choice(ints), True, False, None])
        flat = _flat_canonical(args)
        assert flat == _CANONICAL.encode(args), args
        assert argument_digest(args) == reference(args)
        written += 1
    assert written == 3000


@pytest.mark.parametrize(
    "arguments",
    [
        {"a": 1.5}, {"a": float("nan")}, {"a": [1, "x"]}, {"a": {"b": 1}}, {1: "x"}, {None: "x"}, {True: 1},
        {"a": Level.HIGH}, {"a": Text("x")}, {Text("k"): "x"}, {"a": b"x"}, {"a": (1, 2)}, {"a": object()},
    ],
    ids=lambda a: re.sub(r" at 0x[0-9a-f]+", "", repr(a)),  # the same in every process (parallel runs)
)
def test_anything_else_goes_to_the_encoder(arguments: dict[Any, Any]) -> None:
    assert _flat_canonical(arguments) is None
    assert argument_digest(arguments) == reference(arguments)


def test_no_arguments_and_odd_containers_digest_as_before() -> None:
    for arguments in (None, {}):
        assert argument_digest(arguments) == reference(arguments)
    assert argument_digest({"a": 1}) != argument_digest({"a": "1"}) != argument_digest({"a": True})
    # the order keys arrive in never matters; their text does
    assert argument_digest({"b": 1, "a": 2}) == argument_digest({"a": 2, "b": 1})
    assert argument_digest({"a": 1}) != argument_digest({"A": 1})
    with pytest.raises(TypeError):  # keys that cannot be sorted together: the encoder's error, as before
        argument_digest({"b": 1, 2: "x"})
    # an integer beyond Python's text limit fails as the encoder fails (never a digest of something else)
    big = 10**5000
    with pytest.raises(ValueError):
        json.dumps(big)
    with pytest.raises(ValueError):
        argument_digest({"a": big})
