"""``check`` of a guard one of its walks (a deny list over the caller's text, a negated absent_on_error fact,
an established fact read where an unsure one is not seen, a goal that holds for every call) could not finish:
out of its budget, or stopped (an error, or a goal it could not read). Such a guard was left silent, or told
as "out of budget" whatever stopped it: silence reads as "checked and found fine". Each walk now says it
could not finish, with the guard and the reason, as a warning (never an error, never worded as a finding)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sentinel_mcp.policy.checker import _unfinished_warnings, check_files
from sentinel_mcp.policy.draft_check import draft_problems
from sentinel_mcp.policy.engine import GuardWalk, shared_engine

pytestmark = pytest.mark.timeout(180)

HEAD = (
    "fact(changed/1). fact(blocked/1).\n"
    "effect('shop__modify', [order = O], [establish(changed(O))]).\n"
    "binding(user_by_email(E, U), tool('shop__find_by_email', [email = E]), extract([U = '/id']),"
    " [absent_on_error]).\n"
)
LINE = HEAD.count("\n") + 1
UNFINISHED = "could not finish checking this guard of shop__modify"
# what each walk could not tell (the part of its warning that names the walk)
WALKS = {
    "negated arguments": "a negation over the caller's arguments",
    "absent negations": "negates a fact read absent_on_error",
    "unsure-blind reads": "where a write whose outcome is unknown is not seen",
    "tautology": "proved whatever the call is",
}


async def _unfinished(tmp_path: Path, text: str) -> list[str]:
    f = tmp_path / "rb.pl"
    f.write_text(HEAD + text)
    problems = await check_files(shared_engine(), [f])
    assert not [p for p in problems if p.severity == "error"], problems  # never refuses a draft
    return [f"{p.line} {p.tool} {p.message}" for p in problems if UNFINISHED in p.message]


def _explosion(leaf: str) -> str:
    """Six rules, each calling the next 200 times (200^6 steps unbounded: a rule already being walked is not
    walked again, so the explosion needs distinct rules); the last one gives each walk something to find."""
    rules = "".join(f"p{i}(A) :- {', '.join([f'p{i + 1}(A)'] * 200)}.\n" for i in range(6))
    return f"guard('shop__modify', [order = A], p0(A)).\n{rules}p6(A) :- {leaf}.\n"


LEAF = "\\+ changed(A), once(changed(A)), \\+ user_by_email(A, _), A \\== admin"


@pytest.mark.parametrize("walk", list(WALKS))
async def test_a_walk_out_of_its_budget_says_so(tmp_path: Path, walk: str) -> None:
    warned = [w for w in await _unfinished(tmp_path, _explosion(LEAF)) if WALKS[walk] in w]
    assert len(warned) == 1, warned
    assert warned[0].startswith(f"{LINE} shop__modify "), warned
    assert "within the check's budget" in warned[0], warned


@pytest.mark.parametrize("walk", list(WALKS))
async def test_a_huge_disjunction_is_out_of_budget_not_silence(tmp_path: Path, walk: str) -> None:
    # a rule of many clauses, each calling the next rule's many clauses: the walks follow every clause
    clauses = "".join(f"q{i}(A) :- q{i + 1}(A).\n" for i in range(5) for _ in range(60))
    text = f"guard('shop__modify', [order = A], q0(A)).\n{clauses}q5(A) :- {LEAF}.\n"
    warned = [w for w in await _unfinished(tmp_path, text) if WALKS[walk] in w]
    assert len(warned) == 1 and "within the check's budget" in warned[0], warned


@pytest.mark.parametrize(
    ("walk", "text"),
    [
        # a clause head that takes the call only as a cyclic term (O = f(O)): the walk follows it for ever
        ("negated arguments",
         "guard('shop__modify', [order = O, user = U], q(O, O, U)).\nq(f(Y), Y, U) :- \\+ U == Y.\n"),
        ("tautology", "guard('shop__modify', [order = O], (X = f(X), \\+ blocked(X), \\+ member(O, X))).\n"),
    ],
)
async def test_a_cyclic_term_is_out_of_budget_not_silence(tmp_path: Path, walk: str, text: str) -> None:
    warned = [w for w in await _unfinished(tmp_path, text) if WALKS[walk] in w]
    assert len(warned) == 1 and "within the check's budget" in warned[0], warned


async def test_an_argument_named_the_empty_atom_leaves_no_walk_unfinished(tmp_path: Path) -> None:
    # an argument named '' could not name the variable in the negation's text: the walk of negated arguments
    # stopped there, and the guard was left as if checked and found fine (then said as unfinished); it is
    # now walked (test_check_negated_arguments.py), and no walk of this guard is left unfinished
    warned = await _unfinished(tmp_path, "guard('shop__modify', ['' = O], \\+ member(O, [admin])).\n")
    assert warned == [], warned


async def test_the_warning_is_not_worded_as_a_finding(tmp_path: Path) -> None:
    for w in await _unfinished(tmp_path, _explosion(LEAF)):
        assert "is not known" in w, w
        for finding in ("holds for every call", "is a deny list", "holds on any error", "decides on"):
            assert finding not in w, w


HOSTILE = "'" + "x" * 100_000 + "'"


@pytest.mark.parametrize(
    ("goal", "reason"),
    [
        ("atom_length(f(x), _)", "type_error"),  # an error inside a walk: its kind, from a fixed list
        (f"throw(error(type_error(atom, {HOSTILE}), {HOSTILE}))", "type_error"),
        (f"throw(error({HOSTILE}, _))", "error"),  # an unknown kind is not echoed
        (f"throw({HOSTILE})", "exception"),
        (f"throw(error(resource_error(memory), {HOSTILE}))", "budget"),  # the stacks are the budget too
        ("fail", "failed"),
        ("between(1, inf, _), fail", "budget"),
        ("true", ""),
    ],
)
async def test_the_shared_walk_outcome_names_the_reason_bounded(goal: str, reason: str) -> None:
    """Every walk runs through one predicate (unfinished_walks.pl): an error, a failure or the budget is
    an unfinished walk, its reason a word from a fixed list whatever the error carried."""
    answer = await shared_engine().json_query(
        f"sentinel_core:(walk_outcome(({goal}), 200000, O), outcome_reason(O, R), "
        "to_json_atom(json([reason=R]), Out))"
    )
    assert answer == {"reason": reason}, json.dumps(answer)[:300]


@pytest.mark.parametrize(
    ("reason", "said"),
    [
        ("budget", "within the check's budget"),
        ("type_error", "(its walk stopped on type_error)"),
        ("error", "(its walk stopped on an error)"),
        ("failed", "(its walk stopped at a goal it could not read)"),
        ("exception", "(its walk stopped on an exception)"),
        ("x" * 100_000, "(its walk stopped on an exception)"),  # a reason not of the list is not echoed
    ],
)
def test_the_reason_is_said_in_words_of_a_fixed_list(reason: str, said: str) -> None:
    row = {"tool": "shop__modify", "file": "rb.pl", "line": 3, "unfinished": reason}
    [p] = _unfinished_warnings(GuardWalk(found=[], unfinished=[row]), "it tests something")
    assert p.severity == "warning" and (p.file, p.line, p.tool) == ("rb.pl", 3, "shop__modify")
    assert p.message.startswith(f"{UNFINISHED} {said}: whether it tests something is not known"), p.message
    assert len(p.message) < 300


# the walks whose finding refuses a draft: one that cannot finish refuses it too (fail closed); the others'
# findings only warn, and so does their unfinished walk
REFUSING_WALKS = {"tautology", "unsure-blind reads"}


async def test_a_draft_with_a_guard_no_walk_could_finish_is_refused() -> None:
    schema = {"type": "object", "properties": {"order": {"type": "string"}}}
    tools = [{"name": "modify", "inputSchema": schema,
              "annotations": {"readOnlyHint": False, "destructiveHint": False}}]
    problems = await draft_problems("shop", tools, HEAD + _explosion(LEAF))
    unfinished = [p for p in problems if UNFINISHED in p.message]
    assert len(unfinished) == len(WALKS), problems
    for walk, said in WALKS.items():
        [p] = [p for p in unfinished if said in p.message]
        assert p.severity == ("error" if walk in REFUSING_WALKS else "warning"), p
        assert p.tool == "shop__modify" and p.line == LINE, p
        if walk in REFUSING_WALKS:
            assert p.code == "unchecked_guard" and "a draft is not offered unchecked" in p.message, p


@pytest.mark.parametrize(
    "text",
    [
        _explosion(LEAF),
        "guard('shop__modify', [order = O], (X = f(X), \\+ blocked(X), \\+ member(O, X))).\n",
        "guard('shop__modify', [order = O], ( O == a ; p0(O) )).\n"
        + "".join(f"p{i}(A) :- {', '.join([f'p{i + 1}(A)'] * 200)}.\n" for i in range(6)) + "p6(_).\n",
    ],
)
async def test_a_draft_the_checker_cannot_finish_is_refused_naming_the_guard(text: str) -> None:
    schema = {"type": "object", "properties": {"order": {"type": "string"}, "email": {"type": "string"}}}
    tools = [{"name": "modify", "inputSchema": schema,
              "annotations": {"readOnlyHint": False, "destructiveHint": False}},
             {"name": "find_by_email", "inputSchema": schema, "annotations": {"readOnlyHint": True}}]
    problems = await draft_problems("shop", tools, HEAD + text)
    refused = [p for p in problems if p.severity == "error"]
    assert refused and all(p.code == "unchecked_guard" for p in refused), problems
    assert {(p.tool, p.line) for p in refused} == {("shop__modify", LINE)}, refused
    assert all(UNFINISHED in p.message for p in refused), refused


async def test_a_rulebase_the_checker_cannot_finish_is_only_warned_about(tmp_path: Path) -> None:
    # outside a draft nothing changes: a person reads the warning (_unfinished asserts no error)
    assert await _unfinished(tmp_path, _explosion(LEAF))
