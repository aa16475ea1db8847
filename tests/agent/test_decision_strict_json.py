"""A decision the model wrote as text is read as strict JSON: a key given twice (Python keeps the last, a
reader of the text the first: ``done`` shown, ``open_app`` acted on), NaN or Infinity is an unusable answer,
never the last of two answers."""

from __future__ import annotations

import pytest

from sentinel_mcp.agent.decision import UnusableDecision, parse_decision
from sentinel_mcp.agent.screen import Screen

SCREEN = Screen.from_result({"snapshot_id": "s-1", "package": "com.android.launcher", "elements": []})


@pytest.mark.parametrize("text", [
    '{"action": "done", "reasoning": "r", "text": "ok", "action": "open_app", "text": "com.evil.app"}',
    '{"action": "done", "reasoning": "r", "extra": {"k": 1, "k": 2}}',
    '{"action": "done", "reasoning": "r", "n": NaN}',
    '{"action": "done", "reasoning": "r", "n": -Infinity}',
])
def test_a_decision_that_is_not_strict_json_is_unusable(text):
    with pytest.raises(UnusableDecision, match="not JSON"):
        parse_decision(text, SCREEN, set())


def test_a_strict_decision_text_is_taken():
    assert parse_decision('{"action": "done", "reasoning": "r", "text": "ok"}', SCREEN, set()).text == "ok"


def nested(depth: int, leaf: object = 1) -> object:
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


# an answer a backend hands over parsed (the local llm's ``json``), not as text: held to the same strict
# shape, else a tool's arguments nested 600 deep passed and broke the trace's writers (a RecursionError)
@pytest.mark.parametrize("data", [
    {"tool": "t__x", "arguments": {"q": nested(40)}},
    {"tool": "t__x", "arguments": {"q": nested(700)}},
    {"tool": "t__x", "arguments": {"q": float("nan")}},
    {"tool": "t__x", "arguments": {"q": float("-inf")}},
    {"tool": "t__x", "arguments": {"q": 10 ** 5000}},
    {"action": "done", "reasoning": "r", "text": "ok", "extra": nested(900)},
])
def test_a_parsed_decision_that_is_not_strict_json_is_unusable(data):
    with pytest.raises(UnusableDecision):
        parse_decision(data, SCREEN, {"t__x"})
