"""``check`` of a hostile rulebase (a draft written from words by a model, checked live in the console) is
bounded: the clauses of one predicate are looked up by its name (a chain of 8,000 rules cost n*n at load and
in every walk: half a minute), and every walk of every guard draws on one budget for the whole check
(check_budget.pl): many guards, each costly to walk, held the engine for minutes (each walk of each guard had
only a limit of its own). A walk the budget cuts says it could not finish; on a draft that refuses it.

Asserted on counted inferences (the engine thread's own), never on the wall clock."""

from __future__ import annotations

from pathlib import Path

import pytest

from sentinel_mcp.policy.checker import CHECK_INFERENCES, UNCHECKED_DRAFT, UNFINISHED, check_files
from sentinel_mcp.policy.draft_check import draft_problems
from sentinel_mcp.policy.engine import PrologEngine, shared_engine

pytestmark = pytest.mark.timeout(300)

GUARD = "guard('shop__modify', [order = O], p1(O)).\n"


def _chain(n: int) -> str:
    return GUARD + "".join(f"p{i}(X) :- p{i + 1}(X).\n" for i in range(1, n)) + f"p{n}(X) :- X == a.\n"


def _costly(guards: int, width: int = 40, depth: int = 7) -> str:
    """Many guards, each calling a rule whose walk would branch width**depth ways (each walk of each guard
    runs to its own limit)."""
    out = "".join(f"guard('shop__t{i}', [order = O], p0(O)).\n" for i in range(guards))
    for level in range(depth):
        out += f"p{level}(X) :- " + ", ".join([f"p{level + 1}(X)"] * width) + ".\n"
    return out + f"p{depth}(X) :- X \\== a.\n"


def _nested(n: int) -> str:
    goal = "X == a"
    for i in range(n):
        goal = f"(X == b{i} -> true ; {goal})" if i % 2 else f"({goal} ; X == c{i})"
    return GUARD + f"p1(X) :- {goal}.\n"


SHAPES = {
    "chain of 8000 rules": _chain(8000),
    "fan-out of 2000 goals": GUARD + "p1(X) :- " + ", ".join(f"q{i}(X)" for i in range(2000)) + ".\n"
    + "".join(f"q{i}(X) :- X \\== z.\n" for i in range(2000)),
    "200 nested ; and ->": _nested(200),
    "60 costly guards": _costly(60),
    "8000 clauses of one predicate": GUARD + "".join(f"p1(X) :- X == a{i}.\n" for i in range(8000)),
    "mutual recursion of 2000 rules": GUARD + "".join(
        f"p{i}(X) :- p{i % 2000 + 1}(X) ; p{(i + 1) % 2000 + 1}(X).\n" for i in range(1, 2001)),
    "an atom of a million characters": GUARD + "p1(X) :- X == '" + "a" * 1_000_000 + "'.\n",
}


async def _inferences(engine: PrologEngine) -> int:
    row = await engine.run(lambda p: PrologEngine._first_row(p, "statistics(inferences, I)", "no count"))
    return int(row["I"])


@pytest.mark.parametrize("shape", list(SHAPES))
async def test_a_hostile_shape_is_checked_within_the_budget(tmp_path: Path, shape: str) -> None:
    """The whole check (load included) costs the walks' one budget and a load linear in the text: the chain
    cost ~130 million inferences (n*n), the costly guards ~50 million (each walk of each guard to its
    limit)."""
    text = SHAPES[shape]
    f = tmp_path / "rb.pl"
    f.write_text(text)
    engine = shared_engine()
    before = await _inferences(engine)
    await check_files(engine, [f])
    spent = await _inferences(engine) - before
    allowance = CHECK_INFERENCES + 700 * text.count("\n") + 1_000_000
    assert spent <= allowance, f"{shape}: {spent:,} inferences (allowed {allowance:,})"


async def test_a_walk_the_budget_cuts_says_so(tmp_path: Path) -> None:
    """Once the costly guards have spent the budget, a guard after them, however plain, is not walked: it is
    told as unfinished within the check's budget, never left silent (its goal holds for every call)."""
    f = tmp_path / "rb.pl"
    f.write_text(_costly(60) + "guard('shop__z', [order = O], (O = O)).\n")
    problems = await check_files(shared_engine(), [f])
    last = [p for p in problems if p.tool == "shop__z"]
    assert last and all(UNFINISHED in p.message and "within the check's budget" in p.message for p in last)
    # alone, the same guard is walked and found
    alone = tmp_path / "alone.pl"
    alone.write_text("guard('shop__z', [order = O], (O = O)).\n")
    assert [p.code for p in await check_files(shared_engine(), [alone])] == ["tautological_guard"]


async def test_a_draft_the_budget_cuts_is_refused() -> None:
    """A draft whose guards cannot all be checked within the budget is refused, with the reason: the plain
    guard after the costly ones too (before, it was offered as checked: each guard had a limit of its own)."""
    tools = [{"name": name, "inputSchema": {"type": "object", "properties": {"order": {"type": "string"}}}}
             for name in [*(f"t{i}" for i in range(60)), "z"]]
    text = _costly(60) + "guard('shop__z', [order = O], O == a).\n"
    problems = await draft_problems("shop", tools, text)
    refused = [p for p in problems if p.code == "unchecked_guard"]
    assert refused and all(p.severity == "error" for p in refused)
    assert all("within the check's budget" in p.message and UNCHECKED_DRAFT in p.message for p in refused)
    assert any(p.tool == "shop__z" for p in refused)
