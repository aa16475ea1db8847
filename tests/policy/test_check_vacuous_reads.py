"""``check`` of a case analysis over a value a fact read gives, split between two reads of the same fact:
``allow(B) :- status(B, S), S == active. allow(B) :- status(B, S), S \\== active.`` holds exactly where a
status of B is there, whatever it is: ∃S (P ∨ Q) is ∃S P ∨ ∃S Q, so the two reads are read as one
(probed_cases.pl, hoisted_reads/4) and the tests after it cover every value. It reads as a test of the
status and tests only that one is there: told as such (not as "holds for every call": without the fact it
fails). Two reads of different facts, or of the same fact for different keys, are not one read."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.policy.test_check_clause_set_cases import ALWAYS, LINE, _guard, _problems

from sentinel_mcp.policy.draft_check import draft_problems

pytestmark = pytest.mark.timeout(120)

VACUOUS = "cover every value it reads"

TWO_READS = [
    ("ok(A)", "ok(B) :- booking(B, S), S == active.\nok(B) :- booking(B, S), S \\== active.\n"),
    ("ok(A)", "ok(B) :- booking(B, S), S \\== active.\nok(B) :- booking(B, T), T == active.\n"),
    ("ok(A)", "ok(B) :- booking(B, S), S @< m.\nok(B) :- booking(B, S), S @>= m.\n"),
    ("ok(A)", "ok(B) :- ( booking(B, S), S == active ; booking(B, S2), S2 \\== active ).\n"),
    ("ok(A)", "ok(B) :- booking(B, S), memberchk(S, [a, b]).\n"
     "ok(B) :- booking(B, S), \\+ memberchk(S, [a, b]).\n"),
    ("( booking(A, S), S == active ; booking(A, T), T \\== active )", ""),
    ("( booking(A, S), S == x ; booking(A, T), ( T == y ; T \\== x ) )", ""),
    ("booking(A, S), ( S == x ; S \\== x )", ""),
    ("\\+ \\+ ( booking(A, S), S == x ; booking(A, T), T \\== x )", ""),
]


@pytest.mark.parametrize(("goal", "rules"), TWO_READS)
async def test_a_case_analysis_over_two_reads_of_one_fact_is_warned_about(
    tmp_path: Path, goal: str, rules: str
) -> None:
    problems = await _problems(tmp_path, _guard(goal) + rules)
    assert any(p.startswith(f"warning {LINE} ") and VACUOUS in p for p in problems), problems
    assert not any(ALWAYS in p for p in problems), problems


DIFFERENT_READS = [
    ("ok(A)", "ok(B) :- booking(B, S), S == active.\nok(B) :- blocked(S), S \\== active.\n"),  # two facts
    ("ok(A)", "ok(B) :- booking(B, S), S == active.\nok(_) :- booking(x, S), S \\== active.\n"),  # two keys
    ("ok(A)", "ok(B) :- booking(B, S), S == active.\nok(B) :- booking(S, B), S \\== active.\n"),  # two places
    ("ok(A)", "ok(B) :- booking(B, S), S == active.\nok(B) :- booking(B, S), S \\== paid.\n"),  # misses paid
    ("( booking(A, S), S == x ; booking(A, T), T \\== x ), S == y", ""),  # S is read on: not local
    ("( booking(A, S), S == x ; booking(B, T), T \\== x )", ""),  # two keys
    ("( booking(A, S, S), S == x ; booking(A, T, U), T \\== x )", ""),  # not the same read
    ("booking(A, S), S == x", ""),
    ("booking(A, S), ( S == x ; S == y )", ""),
]


@pytest.mark.parametrize(("goal", "rules"), DIFFERENT_READS)
async def test_reads_that_are_not_one_read_are_not_warned_about(
    tmp_path: Path, goal: str, rules: str
) -> None:
    args = "[id = A, other = B]" if "B," in goal else "[id = A]"
    problems = await _problems(tmp_path, "fact(booking/3).\n" + _guard(goal, args) + rules)
    assert not any(VACUOUS in p or ALWAYS in p for p in problems), problems


async def test_a_draft_with_tests_that_cover_every_value_read_is_refused() -> None:
    text = (
        "fact(booking/2).\nguard('shop__delete', [id = I], ok(I)).\n"
        "ok(B) :- booking(B, S), S == active.\nok(B) :- booking(B, S), S \\== active.\n"
    )
    problems = await draft_problems("shop", [{"name": "delete", "inputSchema": {"type": "object"}}], text)
    assert any(p.severity == "error" and VACUOUS in p.message for p in problems), problems
