"""The facts summary (``sentinel://facts``) names every askable's answer type: a ``choice_of`` askable (the
airline's "which reservation") made it fail with KeyError before."""

from __future__ import annotations

from sentinel_mcp.policy.policy_service import _type_text


def test_every_askable_type_has_a_text() -> None:
    assert _type_text("yes_no") == "yes_no"
    assert _type_text({"choice": ["change_of_plan", "other"], "labels": ["My plans changed", "Another"]}) == (
        "one of change_of_plan, other"
    )
    assert _type_text({"choice_of": []}) == "one of the values the rulebase finds when it asks"
    assert _type_text({"choice": [1, 2]}) == "one of 1, 2"
    assert _type_text({}) == "a choice"
    assert _type_text({"choice": "not a list"}) == "a choice"
