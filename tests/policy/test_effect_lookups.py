"""What an effect looks up names stored facts: an ``invalidate(Pattern)`` and each goal of an
``establish(Head, Cond)`` condition are matched against the fact store (fact_terms.pl), never proved. One that
names anything but a base predicate (a rule, a builtin such as shell/1, a disjunction, a negation, another
module's goal, a variable) matches nothing, ever: the effect loaded silently and never invalidated or
established anything. Refused at load, naming the file, the line and the goal."""

from __future__ import annotations

from pathlib import Path

import pytest

from sentinel_mcp.policy.checker import check_files
from sentinel_mcp.policy.engine import shared_engine

pytestmark = pytest.mark.timeout(60)

HEAD = ("fact(ok/1).\nfact(done/1).\nmine(X) :- ok(X).\n"
        "binding(st(I, S), tool('t__get', [id = I]), extract([S = '/s']), []).\n"
        "guard('t__w', [x = X], ( mine(X), st(X, open) )).\n")
# (action, the goal the error names)
BAD = [
    ("invalidate(shell(A))", "shell(_"),
    ("invalidate(mine(A))", "mine(_"),
    ("invalidate(user:ok(A))", "user:ok(_"),
    ("establish(done(A), shell(x))", "shell(x)"),
    ("establish(done(A), mine(A))", "mine(_"),
    ("establish(done(A), (ok(A), format(atom(_), '~w', [x])))", "format(atom(_"),
    ("establish(done(A), (ok(A) ; st(A, open)))", "ok(_"),
    ("establish(done(A), \\+ ok(A))", "\\+ok(_"),
    ("establish(done(A), user:ok(A))", "user:ok(_"),
    ("establish(done(A), (ok(A), _))", "_"),
]


async def test_an_effect_looks_up_only_stored_facts(tmp_path: Path) -> None:
    f = tmp_path / "effects.pl"
    f.write_text(HEAD + "".join(f"effect('t__w', [x = A], [{action}]).\n" for action, _ in BAD))
    problems = await check_files(shared_engine(), [f])
    errors = {p.line: p.message for p in problems if p.severity == "error" and p.file == str(f)}
    first = HEAD.count("\n") + 1
    assert sorted(errors) == list(range(first, first + len(BAD))), problems
    for line, (action, goal) in enumerate(BAD, start=first):
        assert "not a stored fact" in errors[line] and goal in errors[line], (action, errors[line])


async def test_stored_facts_in_an_effect_load(tmp_path: Path) -> None:
    f = tmp_path / "effects.pl"
    f.write_text(HEAD + "effect('t__w', [x = A], [invalidate(ok(A)), invalidate(st(A, _)),\n"
                        "    establish(done(A), ( ok(A), st(A, open) )), establish(ok(A))]).\n")
    problems = await check_files(shared_engine(), [f])
    assert [p for p in problems if p.severity == "error"] == [], problems
