"""An askable's answer argument (the last of a question that is not yes/no) is a variable of its own: the
answer goes there. A head that fixes it (``askable(approved(small, yes), ..., text, ...)``) or ties it to an
input (``same(X, X)``) loaded, asked its question, and refused every answer (no answer is covered by a head
that leaves the answer no room), so the call could never go ahead; it is now an error at its line, at start,
in ``check`` and at a hot reload. A yes/no question has no answer argument: its head may fix any argument
(``askable(approved(small, yes), ..., yes_no, ...)``), and its answer is taken. Real SWI-Prolog."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.policy.policy_rig import make_guard

from sentinel_mcp.core.decision import Allow, Answer, Ask, ToolCall
from sentinel_mcp.policy.checker import check_files
from sentinel_mcp.policy.engine import shared_engine
from sentinel_mcp.policy.policy_service import PolicyService

pytestmark = pytest.mark.timeout(120)

BAD = [
    'askable(approved(small, yes), "Approve?", text, [])',
    'askable(approved(small, yes), "Approve?", choice([yes, no]), [])',
    'askable(approved(small, 3), "Approve?", number, [])',
    'askable(approved(small, "yes"), "Approve?", text, [])',
    'askable(approved(small, f(_)), "Approve?", text, [])',
    'askable(approved(small, [A]), "Approve ~w?", text, [])',
    'askable(same(X, X), "Same as ~w?", text, [])',
    'askable(same(f(X), X), "Same?", text, [])',
    'askable(pick(X, V), "Pick for ~w?", choice_of(V, V, item(X, V)), [])',  # loads: the control below
]
BAD_ONLY = BAD[:-1]


@pytest.mark.parametrize("askable", BAD_ONLY)
async def test_an_askable_that_fixes_its_answer_is_an_error_at_its_line(tmp_path: Path, askable: str) -> None:
    pl = tmp_path / "shop.pl"
    pl.write_text(f"% shop\n\n{askable}.\nguard('shop__buy', [item = X], approved(small, X)).\n")
    problems = await check_files(shared_engine(), [pl])
    errors = [p for p in problems if p.severity == "error" and "answer argument" in p.message]
    assert errors and errors[0].line == 3 and errors[0].file.endswith("shop.pl"), problems


@pytest.mark.parametrize("askable, goal", [
    ('askable(approved(small, W), "Approve?", text, [])', "approved(small, X)"),
    ('askable(approved(small, yes), "Approve?", yes_no, [])', "approved(small, yes)"),
    ('askable(same(X, X), "Same as ~w?", yes_no, [])', "same(X, X)"),
    (BAD[-1], "pick(X, _)"),
])
async def test_an_askable_with_its_answer_free_loads(tmp_path: Path, askable: str, goal: str) -> None:
    pl = tmp_path / "shop.pl"
    pl.write_text(f"item(a, b).\n{askable}.\nguard('shop__buy', [item = X], {goal}).\n")
    problems = await check_files(shared_engine(), [pl])
    assert not [p for p in problems if p.severity == "error"], problems


async def test_a_yes_no_question_with_fixed_arguments_takes_its_answer(tmp_path: Path) -> None:
    pl = tmp_path / "shop.pl"
    pl.write_text('askable(approved(small, yes), "Approve the purchase?", yes_no, [from([user, agent])]).\n'
                  "guard('shop__buy', [], approved(small, yes)).\n")
    guard = await make_guard(None, tmp_path / "facts.db", files=[pl], seeds={})
    try:
        buy = ToolCall(name="shop__buy", server="shop", tool="buy", arguments={}, session_id="s1",
                       principal="owner", destructive=True)
        d = await guard.decide(buy)
        assert isinstance(d, Ask), d
        await guard.record_answer(buy, d.questions[0], Answer(action="accept", content={"answer": "yes"},
                                                              provenance="user"))
        assert isinstance(await guard.decide(buy), Allow)
        assert await PolicyService(guard).answer("s1", "approved", ["small", "yes"], "yes") == \
            "approved(small,yes)"
    finally:
        await guard.close()
