"""tells_unseen: what a principal's look would say is withheld when it holds, as a word of its own, a value
only facts withheld from it hold (policy_service.why_not). Before, a value was looked for inside the
JSON-escaped dump: 'red' inside the tool name 'return_delivered_order_items' withheld the answer when
another customer's order was red (the answer told whether it was), and a value with an accent or a quote
was never found."""

from __future__ import annotations

import pytest

from sentinel_mcp.policy.withheld_facts import tells_unseen

REASON = "retail__return_delivered_order_items is not allowed: 'no longer needed' or 'ordered by mistake'"


@pytest.mark.parametrize("value", ["red", "none", "live", "mistake by"])
def test_a_value_inside_longer_words_is_not_told(value: str) -> None:
    assert not tells_unseen({"tool": "retail__return_delivered_order_items", "reason": REASON},
                            frozenset({value, "ivan_santos_6635"}))


@pytest.mark.parametrize("said,value", [
    ("the order of ivan_santos_6635.", "ivan_santos_6635"),
    ("Office Chair (color red, material mesh)", "red"),
    ("#W8770097 (pending): Office Chair", "#W8770097"),
    ("ship to Zoë Müller, Köln", "Zoë Müller"),
    ('the "Park" Avenue house', '"Park" Avenue'),
    ("477 Park Avenue\nSuite 558", "Suite 558"),
])
def test_a_value_said_as_a_word_is_told(said: str, value: str) -> None:
    assert tells_unseen({"decision": "deny", "unmet": [said]}, frozenset({"unrelated words", value}))


def test_nothing_unseen_tells_nothing() -> None:
    assert not tells_unseen({"reason": REASON}, frozenset())
