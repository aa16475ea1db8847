"""Digests the console binds a person's answer or reading to are the whole sha256: the text hashed quotes what
a caller wrote (a question's values, a peer's context id), and a cut digest collides for whoever spends the
hashes (48 bits: 2^24; 128 bits: 2^64, within reach of a determined party and nothing gained by cutting)."""

from __future__ import annotations

import hashlib
import json
import re

from sentinel_mcp.console.inbox_pages import asked_digest
from sentinel_mcp.console.web import shown_id


def test_the_questions_a_form_answers_are_bound_by_the_whole_digest() -> None:
    asked = [{"key": "k1", "message": "Buy lamp for 1?", "requested_schema": {"type": "object"}}]
    shown = [["k1", "Buy lamp for 1?", {"type": "object"}]]
    whole = hashlib.sha256(json.dumps(shown, sort_keys=True, default=str).encode()).hexdigest()
    assert asked_digest(asked) == whole
    assert asked_digest(asked) != asked_digest([{**asked[0], "message": "Buy lamp for 2?"}])


def test_a_long_id_is_told_apart_by_its_whole_digest() -> None:
    a, b = "c" * 200 + "a", "c" * 200 + "b"
    shown_a, shown_b = shown_id(a), shown_id(b)
    assert shown_a != shown_b
    digest = re.search(r"whole id #([0-9a-f]+)", shown_a)
    assert digest is not None and digest.group(1) == hashlib.sha256(a.encode()).hexdigest()
