"""An error names the secret argument of the guard being checked (secret_flows.pl, secret_summary/5).

A rule's walk is kept per the mask its caller gives: before, a mask kept only *that* an argument was secret,
so a second guard calling the same rule with another secret argument read the first one's walk, and what the
rule gave back was named by the first guard's argument (``pin`` taken apart in the second guard was reported
as ``password``). Real SWI-Prolog."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from tests.support.checked_rulebase import checked_lines

pytestmark = pytest.mark.timeout(120)

_problems = partial(checked_lines, shown="full")

# the rule each pair of guards share, and what the second guard makes of what it gives back
SHARED = {
    "a copy": ("same(P, Q) :- Q = P.\n", "same(P, Q)"),
    "a copy after a check": ("same(P, Q) :- atom_length(P, N), N > 0, Q = P.\n", "same(P, Q)"),
    "a measure": ("same(P, Q) :- atom_length(P, Q).\n", "same(P, Q)"),
    "a rule of two clauses": ("same(P, Q) :- P == a, Q = P.\nsame(P, Q) :- Q = P.\n", "same(P, Q)"),
    "through a second rule": ("same(P, Q) :- again(P, Q).\nagain(P, Q) :- Q = P.\n", "same(P, Q)"),
}


def _rulebase(rule: str, call: str, first: str, second: str) -> str:
    return (rule
            + f"guard('x__a', [{first} = P], ( {call}, Q \\== x )).\n"
            + f"guard('x__b', [{second} = P], ( {call}, sub_atom(Q, 0, 1, _, H), confirmed('~w?', [H]) )).\n")


@pytest.mark.parametrize("name", list(SHARED))
@pytest.mark.parametrize(("first", "second"), [("password", "pin"), ("api_key", "otp"), ("token", "cvv")])
async def test_an_error_names_the_argument_of_the_guard_checked(tmp_path: Path, name: str, first: str,
                                                                 second: str) -> None:
    rule, call = SHARED[name]
    problems = await _problems(tmp_path, _rulebase(rule, call, first, second))
    line = rule.count("\n") + 2
    mine = [p for p in problems if f":{line}:" in p and "secret argument" in p]
    assert mine and all(f"secret argument {second}" in p for p in mine), (name, problems)
    assert not any(f"secret argument {first}" in p for p in mine), (name, problems)
