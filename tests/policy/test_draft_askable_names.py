"""A drafted askable's predicate is its own: no other askable's and no binding's. Names were made by
lower-casing and joining (``pred_name``), so an argument "Amount" beside "amount" gave two askables of one
predicate (the user's answer to one question held for the other argument), and a read tool's field "a-b"
gave a binding of the very predicate the write's argument "a_b" asks the user for: a hostile upstream's
result answered a question only the user may answer."""

from __future__ import annotations

import re

from sentinel_mcp.policy.draft import draft_rulebase


def _heads(text: str, kind: str) -> list[str]:
    return re.findall(rf"^{kind}\((\w+)\(", text, re.M)


def _wipe(*names: str) -> dict:
    return {"name": "wipe_thing", "annotations": {"destructiveHint": True},
            "inputSchema": {"type": "object", "properties": {n: {"type": "string"} for n in names}}}


def test_arguments_that_name_alike_get_askables_of_their_own() -> None:
    text = draft_rulebase("shop", [_wipe("Amount", "amount", "AMOUNT")], "shop", "policy.md", []).text
    asked = _heads(text, "askable")
    assert len(asked) == 3 and len(set(asked)) == 3, text


def test_an_askable_never_shares_a_predicate_with_a_binding() -> None:
    read = {"name": "get_wipe_thing", "annotations": {"readOnlyHint": True},
            "inputSchema": {"type": "object", "properties": {}},
            "outputSchema": {"type": "object", "properties": {"a-b": {"type": "string"}}}}
    text = draft_rulebase("shop", [_wipe("a_b"), read], "shop", "policy.md", []).text
    asked, bound = _heads(text, "askable"), _heads(text, "binding")
    assert asked and bound and not set(asked) & set(bound), text


def test_the_answer_an_askable_gives_is_in_a_variable_of_its_own() -> None:
    """The guard asked ``wipe_thing_amount(AmountGiven)`` and required ``Amount == AmountGiven``: beside an
    argument named ``amount_given`` (its variable AmountGiven already), the askable was asked of the caller's
    argument and the requirement compared two arguments the caller both chooses."""
    guard = draft_rulebase("shop", [_wipe("amount", "amount_given")], "shop", "policy.md", []).guards[0]
    pattern = set(re.findall(r"\b[A-Z]\w*", guard.split("\n", 1)[0]))
    answers = re.findall(r"wipe_thing_amount\w*\((\w+)\)", guard)
    assert len(answers) == 2 and not pattern & set(answers), guard


def test_a_choice_of_numbers_is_written_as_numbers(tmp_path) -> None:  # noqa: ANN001
    """An enum of numbers was written as the atoms '1', '2': a choice's fact holds the value as the rulebase
    writes it (docs/rulebase-language.md), and the call's argument 2 never equalled the answer '2': the
    drafted guard denied every call. Numbers are written as numbers; any other value as before, quoted."""
    from sentinel_mcp.cli import main

    wipe = {"name": "wipe_thing", "annotations": {"destructiveHint": True},
            "inputSchema": {"type": "object", "properties": {
                "level": {"type": "integer", "enum": [1, 2, -3, 2.5, 10**30, 1e-05]},
                "mode": {"type": "string", "enum": ["a", "1"]}}}}
    text = draft_rulebase("shop", [wipe], "shop", "policy.md", []).text
    assert "choice([1, 2, -3, 2.5, 1000000000000000000000000000000, 1e-05])" in text, text
    assert "choice(['a', '1'])" in text, text
    (tmp_path / "policy.md").write_text("# Shop\n\nThings are wiped only on request.\n")
    (tmp_path / "draft.pl").write_text(text)
    assert main(["check", str(tmp_path / "draft.pl")]) == 0, text
