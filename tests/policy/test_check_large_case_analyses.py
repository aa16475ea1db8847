"""``check`` of a case analysis split across a rule of many clauses, or over many constants: how much is
read is bounded by the work the probes take (probed_cases.pl, probe_tv/5: an inference budget of its own,
within the guard's walk and the check's), not by a count of clauses or constants that would hide a guard
that lets everything through. Where that budget runs out the guard is said to be not analysed (too large),
never kept silent; a table of allowed values, however long, is told apart cheaply (a value outside it is
probed first)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.policy.test_check_clause_set_cases import ALWAYS, LINE, _guard, _problems

pytestmark = pytest.mark.timeout(300)

TOO_LARGE = "too large to analyse"


def _table(n: int) -> str:
    return "".join(f"ok(c{i}).\n" for i in range(n))


def _names(n: int) -> str:
    return ", ".join(f"c{i}" for i in range(n))


def _covering(n: int) -> list[str]:
    return [
        _table(n) + f"ok(X) :- \\+ memberchk(X, [{_names(n)}]).\n",
        "".join(f"ok(X) :- X == c{i}.\n" for i in range(n)) + "ok(X) :- " + ", ".join(
            f"X \\== c{i}" for i in range(n)) + ".\n",
        f"ok(X) :- \\+ memberchk(X, [{_names(n)}]).\n" + _table(n),
        "".join(f"ok(X) :- X == c{i}, !.\n" for i in range(n)) + "ok(_).\n",
        "".join(f"ok(c{i}) :- !, true.\n" for i in range(n)) + f"ok(X) :- \\+ memberchk(X, [{_names(n)}]).\n",
        f"ok(X) :- memberchk(X, [{_names(n)}]).\n" + f"ok(X) :- \\+ memberchk(X, [{_names(n)}]).\n",
    ]


COVERING = [(n, rules) for n in (12, 13, 20, 40) for rules in _covering(n)]


@pytest.mark.parametrize(("n", "rules"), COVERING)
async def test_a_case_analysis_over_many_clauses_is_warned_about(tmp_path: Path, n: int, rules: str) -> None:
    problems = await _problems(tmp_path, _guard("ok(A)") + rules)
    assert any(p.startswith(f"warning {LINE} ") and ALWAYS in p for p in problems), (n, problems)


async def test_a_case_analysis_over_many_arguments_is_warned_about(tmp_path: Path) -> None:
    args = [f"A{i}" for i in range(5)]
    goal = " ; ".join(f"{a} == x" for a in args) + " ; " + ", ".join(f"{a} \\== x" for a in args)
    spec = "[" + ", ".join(f"a{i} = {a}" for i, a in enumerate(args)) + "]"
    problems = await _problems(tmp_path, _guard(goal, spec))
    assert any(p.startswith(f"warning {LINE} ") and ALWAYS in p for p in problems), problems


@pytest.mark.parametrize("n", [13, 50, 400])
async def test_a_long_table_of_allowed_values_is_not_warned_about(tmp_path: Path, n: int) -> None:
    problems = await _problems(tmp_path, _guard("ok(A)") + _table(n))
    assert not any(ALWAYS in p or "could not finish" in p for p in problems), problems


@pytest.mark.parametrize("n", [13, 50, 400])
async def test_a_long_list_of_allowed_values_is_not_warned_about(tmp_path: Path, n: int) -> None:
    problems = await _problems(tmp_path, _guard(f"memberchk(A, [{_names(n)}])"))
    assert not any(ALWAYS in p or "could not finish" in p for p in problems), problems


async def test_a_case_analysis_too_large_to_analyse_is_said(tmp_path: Path) -> None:
    rules = _table(600) + f"ok(X) :- \\+ memberchk(X, [{_names(600)}]).\n"
    problems = await _problems(tmp_path, _guard("ok(A)") + rules)
    said = [p for p in problems if p.startswith(f"warning {LINE} ") and (ALWAYS in p or TOO_LARGE in p)]
    assert said, problems
