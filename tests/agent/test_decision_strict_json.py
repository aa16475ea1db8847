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
