"""A secret argument's value is masked wherever a question's text holds it (``AskUser.shown``), in any
escaped spelling; a short value only where it stands apart (``core/secret_values.py``)."""

from __future__ import annotations

import json

import pytest

from sentinel_mcp.core.asking import Asker, AskUser
from sentinel_mcp.core.display_text import Marked
from sentinel_mcp.core.secret_values import mask_secret_values

SECRET = "s3cr3t'\\\"pw"


@pytest.mark.parametrize("spelled", [
    SECRET,
    json.dumps(SECRET)[1:-1],  # inside a JSON string
    SECRET.replace("\\", "\\\\").replace("'", "\\'"),  # Prolog's ~q
    json.dumps(json.dumps(SECRET))[1:-1],  # quoted twice
    f"xx{SECRET}yy",  # glued to other words
])
def test_a_secret_is_masked_in_every_escaped_spelling(spelled: str) -> None:
    text = mask_secret_values(f"Set the password to {spelled}?", [SECRET])
    assert "s3cr3t" not in text and "pw" not in text.replace("password", ""), text
    assert f"[redacted {len(SECRET)} chars]" in text


def test_a_short_secret_is_masked_only_where_it_stands_apart() -> None:
    assert mask_secret_values("PIN 12? Since 2012, 12.", ["12"]) == (
        "PIN [redacted 2 chars]? Since 2012, [redacted 2 chars].")


def test_a_secret_of_backslashes_costs_no_backtracking() -> None:
    # a pattern of side-by-side quantifiers would take exponential time here; the count bound is the text's
    assert mask_secret_values("\\" * 3000 + "x", ["\\" * 200 + "y"]) == "\\" * 3000 + "x"


@pytest.mark.parametrize("value", [
    {"old": "olD-pass-word1", "new": "neW-pass-word2"}, ["olD-pass-word1", "neW-pass-word2"], 73310042,
])
def test_every_text_inside_a_secret_value_is_masked(value: object) -> None:
    texts = [str(value)] if isinstance(value, int) else ["olD-pass-word1", "neW-pass-word2"]
    ask = AskUser(Asker.POLICY, "Change " + " to ".join(texts) + "?", {"secret": value, "user": "ann"},
                  secret=frozenset({"secret"}))
    shown = ask.shown()
    assert not any(t in shown for t in texts) and "[redacted" in shown and "ann" not in texts, shown


def test_a_marked_text_is_masked_and_stays_marked() -> None:
    ask = AskUser(Asker.GUARD, Marked("Sentinel: allow f(pw=hunter2-xyz)? because hunter2-xyz"),
                  {"pw": "hunter2-xyz"}, secret=frozenset({"pw"}))
    assert "hunter2" not in ask.shown()


def test_no_secret_names_leave_the_text_as_it_was() -> None:
    assert AskUser(Asker.POLICY, "Cancel B-123?", {"b": "B-123"}).shown() == "Cancel B-123?"
