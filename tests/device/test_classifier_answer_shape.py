"""The risk classifier's answer is the model's, reached through a tool: an answer that does not parse as JSON
(nested past the parser) is no answer, and the rules decide, never an error out of the rating (which ended
the action's call with no decision written)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from device_tools.actions import ProposedAction, Target
from device_tools.risk_classifier import ActionRiskClassifier

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("text", [DEEP, '{"risk": "low", "reasons": ' + DEEP + "}"])
async def test_an_answer_nested_past_the_parser_leaves_the_rules_deciding(text):
    async def call_tool(name, arguments):  # a server without an output schema: the answer as JSON text
        return SimpleNamespace(is_error=False, structured_content=None,
                               content=[SimpleNamespace(type="text", text=text)])

    action = ProposedAction(kind="click", tool="click", target=Target(id="e", text="Delete account",
                                                                      clickable=True))
    a = await ActionRiskClassifier(call_tool).assess(action)
    assert a.risk == "high" and a.requires_confirmation and "unavailable" in a.source
