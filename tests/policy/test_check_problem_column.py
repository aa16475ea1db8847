"""A problem found at a column (a syntax error, a hidden character) carries it as a field, ``column``, beside
its line, not only in the words of its message (which stays as it was): an editor or a script places it
without parsing a sentence. A problem of a whole clause or file has none."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.support.checked_rulebase import checked_problems

pytestmark = pytest.mark.timeout(60)


_problems = checked_problems


@pytest.mark.parametrize(
    "text, line",
    [
        ("fact(role/2).\nguard('x__delete', [], role(x y)).\n", 2),
        ("fact(role/2).\n\nguard('x__delete', [], (role(x, y)).\n", 3),
        ("fact(role/2).\nguard('x__delete', [], role(x, y) role(y, x)).\n", 2),
        ("fact(role/2).\nguard('x__delete', [], role(x, y)", 2),
    ],
)
async def test_a_syntax_error_carries_its_column(tmp_path: Path, text: str, line: int) -> None:
    problems = [p for p in await _problems(tmp_path, text) if "syntax error" in p.message]
    assert problems, problems
    p = problems[0]
    said = re.search(r"\(column (\d+)\)", p.message)
    assert said is not None, p.message  # the message as it was
    assert p.line == line and p.column == int(said.group(1)), p


async def test_a_hidden_character_carries_the_column_of_the_first(tmp_path: Path) -> None:
    text = "fact(role/2).\nguard('x__delete', [user = U], role(U, 'ad\u200bmin\u200b')).\n"
    hidden = [p for p in await _problems(tmp_path, text) if "U+200B" in p.message]
    assert len(hidden) == 1 and hidden[0].line == 2 and hidden[0].column == 43, hidden
    assert "(column 43)" in hidden[0].message


async def test_a_problem_of_a_whole_clause_has_no_column(tmp_path: Path) -> None:
    problems = await _problems(tmp_path, "guard('x__delete', [], undefined_thing(x)).\n")
    assert problems and all(p.column is None for p in problems), problems
    assert "column" not in str(problems[0])  # the text form is as it was
