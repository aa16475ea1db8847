"""A peer's card signature whose protected header is nested past the parser's depth is refused as a card
that does not count, never a ``RecursionError`` out of the card check (red team "rt-limits7").

The header is bounded at 2,048 bytes, but 1,024 levels of ``[`` fit in that: ``json.loads`` gives up at
the interpreter's recursion limit with a ``RecursionError``, which neither the card check nor ``signers``
caught (they catch ``NotCanonical``, a ``ValueError``). Now ``parse_unique`` checks the wire bounds first
(depth, values: ``core.wire_limits``) and says ``NotCanonical``; the card check says ``CardRefused``."""

from __future__ import annotations

import base64
import json

import pytest

from sentinel_mcp.a2a.card_canonical import NotCanonical, parse_unique
from sentinel_mcp.a2a.card_signature import CardKeys, CardRefused, check_card, signers


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


SHAPES = {
    "arrays": lambda d: "[" * d + "]" * d,
    "objects": lambda d: '{"a":' * d + "1" + "}" * d,
    "mixed": lambda d: '[{"a":' * (d // 2) + "1" + "}]" * (d // 2),
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("depth", [70, 600, 1000, 1023])
def test_a_deep_header_is_refused_not_a_crash(shape: str, depth: int) -> None:
    text = SHAPES[shape](depth)  # (one past the header's bytes is refused for its length as well)
    with pytest.raises(NotCanonical):
        parse_unique(text)
    entry = {"protected": b64(text.encode()), "signature": b64(b"x" * 64)}
    card = {"name": "peer", "url": "https://peer.example/a2a", "signatures": [entry]}
    with pytest.raises(CardRefused):
        check_card(card, ["peer"], CardKeys({}))
    assert signers([entry]) == [entry]  # an unreadable header: the entry as it is


def test_a_shallow_header_still_parses() -> None:
    assert parse_unique(json.dumps({"alg": "ES256", "kid": [[["k"]]]})) == {"alg": "ES256", "kid": [[["k"]]]}
