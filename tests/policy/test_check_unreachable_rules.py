"""``check`` warns about a predicate the rulebase defines that no guard, context/3 or askable reaches: its
clauses decide nothing, and a guard meant to call it calls another name. A predicate symbolic queries call is
declared ``:- public Name/Arity.`` (Prolog's own word for "called from outside"). Calls to predicates nobody
defines were an error already (goal_check.pl); the shipped and test rulebases stay free of both."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from tests.support.checked_rulebase import checked_lines

from sentinel_mcp.paths import RULEBASES_DIR
from sentinel_mcp.policy.checker import check_paths
from sentinel_mcp.policy.engine import shared_engine

pytestmark = pytest.mark.timeout(120)

BASE = "fact(mine/1).\nfact(paid/1).\n"
UNREACHED = "no guard, context/3 or askable reaches it"


_problems = partial(checked_lines, shown="full")


@pytest.mark.parametrize(
    ("text", "name", "line"),
    [
        ("guard('t__a', [id = R], mine(R)).\nowned(R) :- mine(R).\n", "owned/1", 4),
        # a helper renamed on one side: the guard calls the other, defined, name
        ("guard('t__a', [id = R], own(R)).\nown(R) :- mine(R).\nown_paid(R) :- own(R), paid(R).\n",
         "own_paid/1", 5),
        # a cycle nothing enters is still unreached
        ("guard('t__a', [], true).\nping(X) :- pong(X).\npong(X) :- mine(X), ping(X).\n", "ping/1", 4),
        ("guard('t__a', [], true).\nflag.\nflag :- mine(x).\n", "flag/0", 4),  # told at its first clause
    ],
)
async def test_an_unreached_predicate_is_warned_about(
    tmp_path: Path, text: str, name: str, line: int
) -> None:
    f = tmp_path / "p.pl"
    f.write_text(BASE + text)
    problems = await check_paths(shared_engine(), [f])
    mine = [p for p in problems if p.code == "unreached_predicate" and f"{name} is defined" in p.message]
    assert len(mine) == 1, problems
    assert (mine[0].severity, mine[0].line, mine[0].file) == ("warning", line, str(f)), mine


@pytest.mark.parametrize(
    "texts",
    [
        (BASE + "ok(R) :- mine(R).\nguard('t__a', [id = R], ok(R)).\n",),
        (BASE + "a(R) :- b(R).\nb(R) :- c(R), a(R).\nc(R) :- mine(R).\nguard('t__a', [id = R], a(R)).\n",),
        (BASE + "ok(R) :- mine(R).\nguard('t__a', [id = R], require(\\+ ok(R), 'not mine')).\n",),
        (BASE + "ok(R) :- mine(R).\nguard('t__a', [], findall(R, ok(R), [_])).\n",),
        (BASE + "ok(R) :- mine(R).\nguard('t__a', [id = R], ( ok(R) -> true ; paid(R) )).\n",),
        (BASE + "ok(R) :- mine(R).\ncontext(focus, R, ok(R)).\n",),
        (BASE + "ok(R) :- mine(R).\naskable(pick(R), \"which?\", choice_of(R, R, ok(R)), []).\n",),
        (BASE + ":- public ok/1.\nok(R) :- mine(R).\n",),
        (BASE + ":- public((ok/1, other/0)).\nok(R) :- mine(R).\nother.\n",),
        # across files: a rule of one file serves another's guard
        (BASE + "ok(R) :- mine(R).\n", "guard('t__a', [id = R], ok(R)).\n"),
    ],
)
async def test_a_reached_predicate_is_no_problem(tmp_path: Path, texts: tuple[str, ...]) -> None:
    problems = await _problems(tmp_path, *texts)
    assert not [p for p in problems if UNREACHED in p or ": error: " in p], problems


async def test_a_rulebase_that_does_not_load_is_not_told_unreached_helpers(tmp_path: Path) -> None:
    # the guard that calls ok/1 is refused (guard/4): the error is the finding, not ok/1 read as unreached
    text = BASE + "ok(R) :- mine(R).\nguard('t__a', [id = R], ok(R), paid(R)).\n"
    problems = await _problems(tmp_path, text)
    assert [p for p in problems if "guard/4 is not a guard" in p], problems
    assert not [p for p in problems if UNREACHED in p], problems


async def test_a_public_declaration_of_a_reserved_name_at_another_arity_is_an_error(tmp_path: Path) -> None:
    problems = await _problems(tmp_path, BASE + ":- public guard/4.\n")
    assert any("guard/4 is not a guard" in p and ": error: " in p for p in problems), problems


async def test_a_public_declaration_needs_indicators(tmp_path: Path) -> None:
    problems = await _problems(tmp_path, BASE + ":- public ok.\nok.\n")
    assert any("public needs Name/Arity indicators" in p for p in problems), problems


TEST_RULEBASES = Path(__file__).parent / "rulebases"


@pytest.mark.parametrize(
    "path", sorted(RULEBASES_DIR.glob("*.pl")) + sorted(TEST_RULEBASES.glob("*.pl")), ids=lambda p: p.name
)
async def test_shipped_and_test_rulebases_have_no_such_finding(path: Path) -> None:
    problems = await check_paths(shared_engine(), [path])
    assert not [p for p in problems if UNREACHED in p.message or p.code == "reserved_arity"], problems


UNDEFINED_PUBLIC = "declared public but"


@pytest.mark.parametrize(
    ("text", "name", "line"),
    [
        (":- public nothere/1.\nguard('t__a', [id = R], mine(R)).\n", "nothere/1", 3),
        (":- public ok/2.\nok(R) :- mine(R).\nguard('t__a', [id = R], ok(R)).\n", "ok/2", 3),  # another arity
        ("guard('t__a', [id = R], mine(R)).\n:- public((a/0, nothere/0)).\na.\n", "nothere/0", 4),
        ("guard('t__a', [id = R], mine(R)).\n:- public [oky/1].\nok(R) :- mine(R).\n", "oky/1", 4),  # a typo
        ("guard('t__a', [id = R], mine(R)).\n?- public(gone/3).\n", "gone/3", 4),
    ],
)
async def test_a_public_declaration_of_an_undefined_predicate_is_warned_about(
    tmp_path: Path, text: str, name: str, line: int
) -> None:
    f = tmp_path / "p.pl"
    f.write_text(BASE + text)
    problems = await check_paths(shared_engine(), [f])
    mine = [p for p in problems
            if p.code == "undefined_public" and f"{name} is {UNDEFINED_PUBLIC}" in p.message]
    assert len(mine) == 1, problems
    assert (mine[0].severity, mine[0].line, mine[0].file) == ("warning", line, str(f)), mine


@pytest.mark.parametrize(
    "texts",
    [
        (BASE + ":- public ok/1.\nok(R) :- mine(R).\n",),
        (BASE + ":- public mine/1.\n",),  # a base fact: a symbolic query reads it
        (BASE + ":- public ok/1.\n", "ok(R) :- paid(R).\n"),  # defined in another file
        (BASE + "ok(R) :- mine(R).\n:- public ok/1.\n",),  # declared after its clauses
    ],
)
async def test_a_public_declaration_of_a_defined_predicate_is_no_problem(
    tmp_path: Path, texts: tuple[str, ...]
) -> None:
    problems = await _problems(tmp_path, *texts)
    assert not [p for p in problems if UNDEFINED_PUBLIC in p], problems


async def test_the_walk_of_unreached_predicates_draws_on_the_check_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A check whose budget is spent says it could not finish finding unreached predicates (8,000 rules
    cost ~0.4 s outside the budget); never silence that reads as "every predicate is reached"."""
    from sentinel_mcp.policy import checker

    f = tmp_path / "p.pl"
    f.write_text(BASE + "guard('t__a', [id = R], mine(R)).\n"
                 + "".join(f"p{i}(X) :- p{i + 1}(X).\n" for i in range(1, 8000)) + "p8000(X) :- mine(X).\n")
    found = [p for p in await check_paths(shared_engine(), [f]) if p.code == "unreached_predicate"]
    assert len(found) == 8000, found[:3]  # nothing calls p1/1: the chain is unreached
    monkeypatch.setattr(checker, "CHECK_INFERENCES", 5_000)
    problems = await check_paths(shared_engine(), [f])
    assert not [p for p in problems if p.code == "unreached_predicate"], problems
    cut = [p for p in problems if p.code == "unfinished_walk" and "which predicates no guard" in p.message]
    assert len(cut) == 1 and checker.UNFINISHED in cut[0].message and "budget" in cut[0].message, problems
    assert cut[0].severity == "warning" and cut[0].file == str(f), cut
