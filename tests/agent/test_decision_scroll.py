"""A model's scroll names one of the directions or none (down); any other text is no decision: the loop tells
the model and asks again, never guesses a direction it did not give (before: anything became "down")."""

from __future__ import annotations

import pytest

from sentinel_mcp.agent.decision import DIRECTIONS, UnusableDecision, parse_decision
from sentinel_mcp.agent.screen import Screen

SCREEN = Screen.from_result({"snapshot_id": "s-1", "package": "com.android.settings", "elements": []})


@pytest.mark.parametrize("text", ["sideways", "UP", "Down", " down", "down\n", "up please", "upward", "d0wn",
                                  "\u0443p", "ｄｏｗｎ", "down\u200b", "left; right", "-1"])
def test_a_made_up_direction_is_no_decision(text: str) -> None:
    with pytest.raises(UnusableDecision, match="scroll's text is one of"):
        parse_decision({"action": "scroll", "text": text}, SCREEN, set())


@pytest.mark.parametrize("text", [*DIRECTIONS, None])
def test_a_direction_or_none_is_taken_as_given(text: str | None) -> None:
    assert parse_decision({"action": "scroll", "text": text}, SCREEN, set()).text == text
