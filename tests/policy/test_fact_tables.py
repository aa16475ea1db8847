"""A session's facts, one table per fact name (fact_terms.pl's fact_table/3): '$fact'/5, the predicate every
look-up goes through, holds one clause per name, never the facts themselves. With the facts in it, a look-up
by name alone (current_time(T)) walked the facts of any name sharing its bucket of the JIT's ~32-bucket index
of names: 76 us against 0.4 in the airline guard when 50k facts shared it, flipped by the order atoms were
made. And every path that stores, reads or removes facts must see the same facts as before."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.policy.guard import PolicyGuard
from sentinel_mcp.policy.prolog_text import fact_text, quote_atom

pytestmark = pytest.mark.timeout(120)

RULES = "guard('t__noop', [], true).\n"
FAR = time.time() + 10 * 365 * 86400


@pytest.fixture
async def guard(tmp_path: Path) -> Any:
    rb = tmp_path / "tables.pl"
    rb.write_text(RULES)
    g = PolicyGuard([rb], None, store_path=tmp_path / "facts.db")
    await g.start(watch=False)
    assert g.problem is None, g.problem
    yield g
    await g.close()


async def _one(guard: PolicyGuard, goal: str) -> dict[str, Any]:
    rows = await guard.engine.run(lambda p: list(p.query(goal, maxresult=1)))
    assert rows, goal
    return rows[0]


async def _count(guard: PolicyGuard, mod: str, pattern: str) -> int:
    m = quote_atom(mod)
    row = await _one(guard, f"aggregate_all(count, sentinel_core:stored_fact({m}, {pattern}, _, _), C)")
    return int(row["C"])


async def test_the_name_index_holds_one_clause_a_name_not_the_facts(guard: PolicyGuard) -> None:
    mod = await guard.knowledge.ensure("s1", guard.rulebases.current)
    big = [(fact_text("leg", [f"R{i}", "F1"]), FAR, "observed") for i in range(2000)]
    now = (fact_text("now_is", ["2024-05-15T15:00:00"]), FAR, "observed")
    await guard.engine.assert_facts(mod, [*big, now])
    row = await _one(guard, f"predicate_property({quote_atom(mod)}:'$fact'(_, _, _, _, _), "
                            "number_of_clauses(C))")
    assert row["C"] == 2  # two names (2,001 clauses with the facts in it)
    # a look-up by name alone finds its own fact; by name and key, each of the other's
    assert await _count(guard, mod, "now_is(_)") == 1
    assert await _count(guard, mod, "leg('R1999', _)") == 1
    assert await _count(guard, mod, "leg(_, 'F1')") == 2000
    assert await _count(guard, mod, "_") == 2001


async def test_every_path_sees_the_facts_as_before(guard: PolicyGuard) -> None:
    mod = await guard.knowledge.ensure("s2", guard.rulebases.current)
    m = quote_atom(mod)
    facts = [(fact_text("leg", ["R1", "F1"]), FAR, "observed"), (fact_text("leg", ["R2", "F2"]), FAR, "user"),
             (fact_text("seat", ["R1"]), FAR, "observed"),
             (fact_text("gone", ["x"]), time.time() + 1, "observed")]
    await guard.engine.assert_facts(mod, facts)
    assert await _count(guard, mod, "_") == 4
    # a removal of what was observed leaves the user's fact of the same text
    await guard.engine.retract_observed(mod, [fact_text("leg", ["R1", "F1"]), fact_text("leg", ["R2", "F2"])])
    assert await _count(guard, mod, "leg(_, _)") == 1 and await _count(guard, mod, "leg('R2', _)") == 1
    # expiry drops only the expired fact; a removal by pattern drops every match and nothing else
    await guard.engine.purge(mod, time.time() + 5)
    assert await _count(guard, mod, "gone(_)") == 0 and await _count(guard, mod, "_") == 2
    await guard.engine.retract(mod, "seat(_)")
    assert await _count(guard, mod, "seat(_)") == 0 and await _count(guard, mod, "leg(_, _)") == 1
    # names 5 and '5' are two names (tables are numbered, not named after the fact)
    await _one(guard, f"sentinel_core:assert_fact({m}, 5, {FAR!r}, observed), "
                      f"sentinel_core:assert_fact({m}, '5', {FAR!r}, observed)")
    assert await _count(guard, mod, "5") == 1 and await _count(guard, mod, "'5'") == 1
    # a confirmation is taken once, and only this call's
    conf = [("'$confirmed'(t, d1, v, 'Cancel?', yes)", FAR, "user"),
            ("'$confirmed'(t, d2, v, 'Cancel?', yes)", FAR, "user")]
    await guard.engine.assert_facts(mod, conf)
    took = await _one(guard, f"sentinel_core:sn_take_confirmation({m}, t, d1, v, Out)")
    again = await _one(guard, f"sentinel_core:sn_take_confirmation({m}, t, d1, v, Out)")
    assert "d1" in str(took["Out"]) and "d1" not in str(again["Out"])
    assert await _count(guard, mod, "'$confirmed'(t, _, _, _, _)") == 1
    # a dropped session holds nothing, and takes facts again
    await guard.engine.drop_session(mod)
    await _one(guard, f"sentinel_core:ensure_session({m})")
    assert await _count(guard, mod, "_") == 0
    await guard.engine.assert_facts(mod, [(fact_text("seat", ["R9"]), FAR, "observed")])
    assert await _count(guard, mod, "_") == 1 and await _count(guard, mod, "seat('R9')") == 1


async def test_a_sessions_tables_are_bounded_and_facts_past_the_bound_are_kept_as_every_fact(
        guard: PolicyGuard) -> None:
    """A table stays until its session is dropped: names made from what is read, taught and removed in turn,
    must not add predicates without end. Past ``max_fact_tables/1`` a name's facts go in '$fact'/5 itself,
    found, removed, expired and dropped by every path as the others."""
    mod = await guard.knowledge.ensure("s3", guard.rulebases.current)
    m = quote_atom(mod)
    bound = int((await _one(guard, "sentinel_core:max_fact_tables(B)"))["B"])
    names = [f"n{i}" for i in range(bound + 40)]
    await guard.engine.assert_facts(mod, [(fact_text(n, ["k", 1]), FAR, "observed") for n in names])
    tables = await _one(guard, f"aggregate_all(count, {m}:'$fact_table'(_, _), C)")
    assert tables["C"] == bound
    row = await _one(guard, f"predicate_property({m}:'$fact'(_, _, _, _, _), number_of_clauses(C))")
    assert row["C"] == bound + 40  # a calling clause a table, the 40 facts past the bound themselves
    assert await _count(guard, mod, "_") == bound + 40
    for n in (names[0], names[bound - 1], names[bound], names[-1]):
        assert await _count(guard, mod, f"{n}(k, _)") == 1, n
    # taught again: replaced, not doubled; removed by pattern and as observed; expired
    last, past = names[-1], names[bound + 1]
    await guard.engine.assert_facts(mod, [(fact_text(last, ["k", 1]), FAR, "observed")])
    assert await _count(guard, mod, f"{last}(_, _)") == 1
    await guard.engine.retract(mod, f"{last}(_, _)")
    await guard.engine.retract_observed(mod, [fact_text(past, ["k", 1])])
    assert await _count(guard, mod, f"{last}(_, _)") == 0 and await _count(guard, mod, f"{past}(_, _)") == 0
    soon = names[bound + 2]
    await guard.engine.assert_facts(mod, [(fact_text(soon, ["k", 2]), time.time() + 1, "observed")])
    await guard.engine.purge(mod, time.time() + 5)
    assert await _count(guard, mod, f"{soon}(_, _)") == 1  # the FAR one stays
    assert await _count(guard, mod, f"{soon}(k, 2)") == 0
    # still no new table; a name that has one still stores in it
    assert (await _one(guard, f"aggregate_all(count, {m}:'$fact_table'(_, _), C)"))["C"] == bound
    await guard.engine.assert_facts(mod, [(fact_text(names[0], ["k", 7]), FAR, "observed")])
    assert await _count(guard, mod, f"{names[0]}(k, _)") == 2
    await guard.engine.drop_session(mod)
    await _one(guard, f"sentinel_core:ensure_session({m})")
    assert await _count(guard, mod, "_") == 0
