"""``check`` of a guard that lets a destructive tool through on nothing: a goal proved by no fact, no answer
and no confirmation (only pure builtins over the arguments the caller chooses), in any spelling. Such a guard
turns off the fail-safe default's confirmation for the tool; a hostile or careless draft wrote
``guard('shop__delete_account', [], true)`` or ``guard('shop__*', [], true)`` and ``check`` found it clean."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from tests.support.checked_rulebase import checked_lines
from mcp.types import Tool, ToolAnnotations

pytestmark = pytest.mark.timeout(60)

POLICY = """# Shop policy

## Refunds

Refunds may only be issued for delivered orders. The agent must confirm the amount with the user.

## Accounts

Never delete a customer's account. Anyone may reset a password without asking.
"""

CATALOG = [
    Tool(name="shop__delete_account", inputSchema={"type": "object"},
         annotations=ToolAnnotations(destructiveHint=True)),
    Tool(name="shop__refund", inputSchema={"type": "object"}),  # no annotations: destructive by default
    Tool(name="shop__reset_password", inputSchema={"type": "object"},
         annotations=ToolAnnotations(destructiveHint=False)),
    Tool(name="shop__get_order", inputSchema={"type": "object"},
         annotations=ToolAnnotations(readOnlyHint=True)),
]

HEAD = "policy_document(shop, 'policy.md').\nfact(blocked/1).\n"
UNCONDITIONAL = "lets shop__delete_account through on nothing"


_problems = partial(checked_lines, head=HEAD, policy=POLICY, catalog=CATALOG)


@pytest.mark.parametrize(
    "guards",
    [
        "guard('shop__delete_account', [], true).\n",
        "guard('shop__delete_account', [], (true ; fail)).\n",
        "guard('shop__delete_account', [], once(\\+ fail)).\n",
        "guard('shop__delete_account', [user = U], (atom(U), U \\== admin)).\n",
        "guard('shop__delete_account', [amount = A], (A < 100 -> true ; A =:= 100)).\n",
        "guard('shop__delete_account', [], ok).\nok.\n",
        "guard('shop__delete_account', [], ok(x)).\nok(X) :- atom(X).\nok(X) :- blocked(X).\n",
        "guard('shop__delete_account', [], require(true, 'the customer asked')).\n",
        "guard('shop__delete_account', [], ( blocked(x) -> confirmed('Delete?', []) ; true )).\n",
        "guard('shop__*', [], true).\n",
        # the agent answers what an askable lets it answer (the default): the client meets it
        "guard('shop__delete_account', [], sure(yes)).\n"
        "askable(sure(X), \"Sure?\", choice([yes, no]), []).\n",
        "guard('shop__delete_account', [], sure).\naskable(sure, \"Sure?\", yes_no, [from([agent])]).\n",
        # a citation on a branch never taken is no policy sentence saying so
        "guard('shop__delete_account', [], ( fail -> require(true, 'x', policy_ref(shop, 'Never delete a "
        "customer''s account')) ; true )).\n",
        "guard('shop__delete_*', [args(_)], findall(x, member(a, [a]), _)).\n",
    ],
)
async def test_a_guard_that_needs_nothing_is_warned_about(tmp_path: Path, guards: str) -> None:
    problems = await _problems(tmp_path, guards)
    assert any(p.startswith("warning 3 ") and UNCONDITIONAL in p for p in problems), problems


@pytest.mark.parametrize(
    "guards",
    [
        "guard('shop__delete_account', [], confirmed('Delete the account?', [])).\n",
        "guard('shop__delete_account', [], require(\\+ blocked(x), 'blocked')).\n",
        "guard('shop__delete_account', [], (ok, blocked(x))).\nok.\n",
        "guard('shop__delete_account', [], require(true, 'x', policy_ref(shop, 'Never delete a customer''s "
        "account'))).\n",
        # the wildcard's guard adds up with the tool's own, which asks
        "guard('shop__*', [], true).\nguard('shop__delete_account', [], confirmed('Delete?', [])).\n"
        "guard('shop__refund', [], confirmed('Refund?', [])).\n",
        "guard('shop__delete_account', [], (1 == 2)).\n",
        "guard('shop__delete_account', [], sure).\naskable(sure, \"Sure?\", yes_no, [from([user])]).\n",
        "guard('shop__reset_password', [], true).\n",  # changes no data: the policy's own words aside
    ],
)
async def test_a_guard_that_needs_something_or_cites_the_policy_is_not(tmp_path: Path, guards: str) -> None:
    problems = await _problems(tmp_path, guards)
    assert not any("through on nothing" in p for p in problems), problems


async def test_the_wildcard_names_each_destructive_tool_it_lets_through(tmp_path: Path) -> None:
    problems = await _problems(tmp_path, "guard('shop__*', [], true).\n")
    mine = sorted(p for p in problems if "through on nothing" in p)
    assert len(mine) == 2 and "shop__refund" in mine[1] and "shop__delete_account" in mine[0], mine


UNFINISHED = "could not finish checking this guard of shop__delete_account within the check's budget"


async def test_a_walk_built_to_explode_is_warned_about_not_waited_on(tmp_path: Path) -> None:
    """Each ``q`` first tries ``q :- p``, whose bodies have 200 ``q``: 400^3 steps unbounded. The walk has
    an inference budget per guard; a guard it cannot finish is one it cannot call safe: said as a walk that
    could not finish (unfinished_walks.pl), like the other walks, not worded as a finding."""
    qs = ", ".join(["q"] * 200)
    problems = await _problems(
        tmp_path,
        "guard('shop__delete_account', [], p).\n"
        f"p :- {qs}, blocked(x).\np :- {qs}.\nq :- p.\nq.\n",
    )
    said = [p for p in problems if p.startswith("warning 3 ") and "through on nothing" in p]
    assert len(said) == 1 and UNFINISHED in said[0], problems
    assert "whether it lets the tool through on nothing" in said[0] and "is not known" in said[0], said
    assert UNCONDITIONAL not in said[0], said


async def test_an_unfinished_walk_beside_a_guard_that_asks_is_not_told(tmp_path: Path) -> None:
    """Guards add up: one that asks is enough, whatever another's walk could tell."""
    qs = ", ".join(["q"] * 200)
    problems = await _problems(
        tmp_path,
        "guard('shop__delete_account', [], p).\nguard('shop__delete_account', [], blocked(x)).\n"
        f"p :- {qs}, blocked(x).\np :- {qs}.\nq :- p.\nq.\n",
    )
    assert not [p for p in problems if "through on nothing" in p], problems


#  A negation over a ground goal is decided by running the goal: it must run as the guard would, a requirement
#  as the goal it requires and Sentinel's runtime predicates as the rulebase reaches them. Run as a plain goal
#  outside the rulebase, require/2 and iso_date_before/2 did not exist, the error read as "false": every such
#  negation held (a warning for a guard that holds on no call), every such positive goal failed (none for
#  one that holds on every call).
@pytest.mark.parametrize(
    ("goal", "warned"),
    [
        ("\\+ require(1 =:= 1, 'x')", False),
        ("\\+ require(1 =:= 2, 'x')", True),
        ("\\+ \\+ require(1 =:= 2, 'x')", False),
        ("\\+ \\+ require(1 =:= 1, 'x', policy_ref(shop, 'Never delete a customer''s account'))", True),
        ("\\+ (true, require(true, 'x'))", False),
        ("\\+ findall(x, require(1 =:= 2, 'x'), [])", False),
        ("\\+ findall(x, require(1 =:= 1, 'x'), [])", True),
        ("\\+ iso_date_before('2020-01-01', '2021-01-01')", False),
        ("\\+ iso_date_before('2021-01-01', '2020-01-01')", True),
        ("iso_date_before('2020-01-01', '2021-01-01')", True),
        ("iso_date_before('2021-01-01', '2020-01-01')", False),
    ],
)
async def test_a_ground_goal_is_tried_as_the_guard_runs_it(
    tmp_path: Path, goal: str, warned: bool
) -> None:
    problems = await _problems(tmp_path, f"guard('shop__delete_account', [], ({goal})).\n")
    assert any(p.startswith("warning 3 ") and UNCONDITIONAL in p for p in problems) is warned, problems
