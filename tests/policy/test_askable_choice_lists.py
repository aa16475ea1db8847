"""A hand-written ``choice([...])`` list no form can ask is an error at load, with its file and line.

A list whose choices an answer or a person could not tell apart (``'1'`` and ``"1"``, one JSON text; ``1``
and ``1.0``, one JSON number; two of one title, whatever their case or spacing; a title that reads as the
answer "I don't know"), one with a value no form offers (``[]``, an infinite float, the text
``"i_dont_know"``, which is the answer "I don't know"), an empty list, or a label that is no text loaded,
and the question was refused only when it was asked (``questions._options``): the rulebase's author learned
of it from a refused call. ``sentinel-mcp check`` and every load now say it. Real SWI-Prolog."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.policy.test_cli_and_checker import cli

from sentinel_mcp.policy.checker import check_files
from sentinel_mcp.policy.engine import shared_engine

pytestmark = pytest.mark.timeout(120)

GUARD = "guard('shop__pay', [account = A], level(A, _)).\n"

BAD = [
    "['1', \"1\"]", "[1, 1.0]", "[yes - \"Yes\", 'Yes']", "[a - \"Same\", b - \"Same\"]",
    "[a - \"Same\", b - \"same \"]", "[change_of_plan, 'Change of plan']", "[true, \"true\"]", "[1, '1']",
    "[a - \"I don't know\", b]", "[a - \"i  DON'T know\"]", "[]", "[[], a]", "[1.0Inf, a]", "[1.5NaN]",
    "[\"i_dont_know\", a]", "[a - 3, b]", "[a - '', b]", "[a - \"\", b]", "[a - [], b]",
    # read alike through look-alike characters (the question's own check: skeletons), found after the load
    "[a - \"I don\u2019t know\"]", "[a - \"Yes\", b - \"Y\u0435s\"]", "[l, 1]",
]


@pytest.mark.parametrize("choices", BAD)
async def test_a_choice_list_no_form_can_ask_is_an_error_with_its_line(tmp_path: Path, choices: str) -> None:
    pl = tmp_path / "shop.pl"
    pl.write_text(f'% shop\n\naskable(level(A, L), "Which level for ~w?", choice({choices}), []).\n' + GUARD,
                  encoding="utf-8")
    problems = await check_files(shared_engine(), [pl])
    errors = [p for p in problems if p.severity == "error" and p.line == 3 and "choice" in p.message]
    assert errors and errors[0].file.endswith("shop.pl"), problems


@pytest.mark.parametrize("choices", [
    "[1, 2.5, 3 - \"Three\", top, \"2\" - \"Two, a text\", true - \"On\"]", "[a - \"I know\", b]",
    "[change_of_plan, airline_cancelled, health, weather, other]", "[null, false, 0]", "[a - true, b]",
])
async def test_choice_lists_a_form_can_ask_load(tmp_path: Path, choices: str) -> None:
    pl = tmp_path / "shop.pl"
    pl.write_text(f'askable(level(A, L), "Which level for ~w?", choice({choices}), []).\n' + GUARD)
    problems = await check_files(shared_engine(), [pl])
    assert not [p for p in problems if p.severity == "error"], problems


def test_check_says_which_choices_cannot_be_told_apart(tmp_path: Path) -> None:
    pl = tmp_path / "shop.pl"
    pl.write_text('askable(level(A, L), "Which level for ~w?", choice([\'1\', "1"]), []).\n' + GUARD)
    r = cli("check", str(pl), cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"{pl}:1: error:" in r.stdout and "tell" in r.stdout, r.stdout
