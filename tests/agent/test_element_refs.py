"""An element reference from the model is an id or a short index in ASCII digits. ``str.isdigit`` is true of
"²" and "٣", which ``int`` refuses or reads as another number, and of a 5,000-digit string, which ``int``
refuses past its limit: each raised ValueError out of the decision's check (not an unusable answer), which
ended the run instead of the step."""

from __future__ import annotations

import pytest

from sentinel_mcp.agent.decision import UnusableDecision, parse_decision
from sentinel_mcp.agent.screen import Screen

SID = "s-0123456789"
SCREEN = Screen.from_result({"snapshot_id": SID, "elements": [
    {"id": "e-01234567", "index": 1, "text": "OK"}, {"id": "e-89abcdef", "index": 3, "text": "Pay"}]})


@pytest.mark.parametrize(
    "ref", ["²", "³", "#²", "9" * 5000, "#" + "1" * 5000, "٣", "#٣", "𝟑", "1\u200b", " 3 x"]
)
def test_an_index_not_in_ascii_digits_is_an_unusable_answer(ref):
    with pytest.raises(UnusableDecision, match="not on the current screen"):
        parse_decision({"action": "click", "snapshot_id": SID, "element_id": ref, "reasoning": "r"}, SCREEN,
                       set())


@pytest.mark.parametrize("ref,found", [("1", "e-01234567"), ("#3", "e-89abcdef"), (3, "e-89abcdef"),
                                       ("e-89abcdef", "e-89abcdef")])
def test_an_index_or_an_id_names_its_element(ref, found):
    decision = parse_decision({"action": "click", "snapshot_id": SID, "element_id": ref, "reasoning": "r"},
                              SCREEN, set())
    assert decision.element_id == found
