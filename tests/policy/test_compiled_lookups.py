"""A compiled rule's fact look-up written out in its clause (rule_compiler.pl's lookup_code/4), not a call of
valid_fact_of/3: one inference fewer a look-up, and its expiry test compiled in line only where the rule holds
no arithmetic of its own (under SWI-Prolog's optimise flag the rule's arithmetic would be compiled in line
too, and its errors would name another context than the interpreter's). The compiled path must decide
exactly as the interpreter over facts present, missing, expired, unsure, held past the session's bound of
fact tables, and hostile values; and a session never reads another's facts."""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.policy.guard import PolicyGuard
from sentinel_mcp.policy.prolog_text import fact_text, quote_atom
from tests.policy.test_compiled_rules import both, call, fetched, same_decision
from tests.support.forged_values import ATTACKS

pytestmark = pytest.mark.timeout(240)

FAR = time.time() + 10 * 365 * 86400

RULES = r"""
fact(p/1). fact(q/2). fact(r/1).
binding(b(X, Y), tool('t__get', [x = X]), extract([Y = '/y']), [ttl(60)]).
one(X) :- p(X).
three(X) :- p(X), p(X), p(X).
one_n(X) :- q(X, N), N \== x, N > 0.
three_n(X) :- q(X, N), q(X, N), q(X, N), N \== x, N > 0.
odd(X) :- q(X, N), N > 1.  % a text or an atom N: an error on both paths
plain(X) :- p(X), \+ r(X), ( q(X, Y) -> Y \== bad ; r(a) ).
counted(X) :- q(X, N), M is N + 1, M >= 2.
fetch(X) :- b(X, Y), Y \== bad.
guard('t__one', [x = X], one(X)).
guard('t__three', [x = X], three(X)).
guard('t__one_n', [x = X], one_n(X)).
guard('t__odd', [x = X], odd(X)).
guard('t__plain', [x = X], plain(X)).
guard('t__counted', [x = X], counted(X)).
guard('t__fetch', [x = X], fetch(X)).
guard('t__inline', [x = X], ( p(X), q(X, N), N > 1 )).
guard('t__neg', [x = X], ( \+ r(X), \+ q(X, bad) )).
"""


@pytest.fixture
async def guard(tmp_path: Path) -> Any:
    rb = tmp_path / "lookups.pl"
    rb.write_text(RULES)
    g = PolicyGuard([rb], None, store_path=tmp_path / "facts.db")
    await g.start(watch=False)
    assert g.problem is None, g.problem
    yield g
    await g.close()


async def _inferences(guard: PolicyGuard, mod: str, goal: str) -> int:
    rb = quote_atom(guard.rulebases.current.module)
    q = (f"sentinel_core:begin_query({rb}, {quote_atom(mod)}, {time.time()!r}, c(t__one, d, v)), "
         f"once({rb}:{goal}), "  # warm: a predicate's first call counts one more
         f"statistics(inferences, I0), once({rb}:{goal}), statistics(inferences, I1), I is I1 - I0")
    rows = await guard.engine.run(lambda p: list(p.query(q, maxresult=1)))
    assert rows, goal
    return int(rows[0]["I"])


async def test_a_compiled_look_up_costs_two_inferences_without_arithmetic(guard: PolicyGuard) -> None:
    """Three look-ups against one: each after the clause's first costs '$fact'/5 and the name's table (the
    query state read once a clause; 8 for two on main, through valid_fact_of/3 and nb_getval/2: fails there);
    a rule with arithmetic of its own is compiled without the optimise flag and calls valid_fact_of/3 as
    before (written out there, ==/2 and >/2 were calls)."""
    mod = await guard.knowledge.ensure("n1", guard.rulebases.current)
    await guard.engine.assert_facts(mod, [(fact_text("p", ["a"]), FAR, "observed"),
                                          (fact_text("q", ["a", 3]), FAR, "observed")])
    one = await _inferences(guard, mod, "'$r:one'(a, _)")
    three = await _inferences(guard, mod, "'$r:three'(a, _)")
    assert three - one == 4, (one, three)  # 8 through valid_fact_of/3
    one_n = await _inferences(guard, mod, "'$r:one_n'(a, _)")
    three_n = await _inferences(guard, mod, "'$r:three_n'(a, _)")
    assert three_n - one_n == 8, (one_n, three_n)


def _value(rng: random.Random) -> Any:
    return rng.choice([
        "a", "k", "bad", 1, 3, 0, -2, 2.5, "", "'", "\\", "\u00e9t\u00e9", "\U0001f600", "a\nb",
        "x" * 5000, "$fact 0", "$fact", "$unsure", "[]", "_X", "f(X)", rng.choice(ATTACKS), 10**30,
    ])


def _facts(rng: random.Random, x: Any, now: float) -> list[tuple[str, float | None, str]]:
    out: list[tuple[str, float | None, str]] = []
    for _ in range(rng.randint(0, 9)):
        exp = FAR if rng.random() < 0.75 else now - rng.choice([1, 3600])  # expired: never read
        prov = rng.choice(["observed", "user", "agent"])
        kind = rng.choice(["p", "q", "r", "b", "fetched", "unsure"])
        if kind == "p":
            out.append((fact_text("p", [rng.choice([x, x, "a", _value(rng)])]), exp, prov))
        elif kind == "q":
            n = rng.choice([1, 3, 0, "bad", "x", _value(rng)])
            out.append((fact_text("q", [rng.choice([x, "a"]), n]), exp, prov))
        elif kind == "r":
            out.append((fact_text("r", [rng.choice([x, "a", _value(rng)])]), exp, prov))
        elif kind == "b":
            out.append((fact_text("b", [x, rng.choice(["good", "bad"])]), exp, prov))
        elif kind == "fetched":
            out.append((fetched("b", 2, "t__get", {"x": x}), exp, "observed"))
        else:  # a write's unknown outcome: seen only where it can deny
            name = rng.choice(["r", "q"])
            args = [x] if name == "r" else [x, "bad"]
            out.append((f"'$unsure'({fact_text(name, args)})", exp, "observed"))
    return out


async def _fill_tables(guard: PolicyGuard, mod: str, n: int) -> None:
    """n names of their own in the session (tables past the bound put the rulebase's facts in '$fact'/5)."""
    m = quote_atom(mod)
    await guard.engine.goal(f"sentinel_core:ensure_session({m}), forall(between(1, {n}, I), "
                            f"( format(atom(N), 'filler_~d', [I]), F =.. [N, I], "
                            f"sentinel_core:assert_fact({m}, F, {FAR!r}, observed) ))")


async def test_compiled_look_ups_decide_as_the_interpreter(guard: PolicyGuard) -> None:
    rng = random.Random(21)
    tools = list(guard.rulebases.current.info.guards)
    statuses: dict[str, set[str]] = {}
    for i in range(260):
        session = f"d{i}"
        x = _value(rng) if rng.random() < 0.4 else rng.choice(["a", "k"])
        tool = tools[i % len(tools)]
        c = call(tool, {"x": x}, session)
        mod = await guard.knowledge.ensure(session, guard.rulebases.current)
        if i % 5 == 0:  # past the bound of tables: every fact of the rulebase in '$fact'/5 itself
            await _fill_tables(guard, mod, 1024)
        facts = _facts(rng, x, time.time())
        await guard.engine.assert_facts(mod, facts)
        fast, ref = await both(guard, c)
        assert fast == ref, (c, facts)
        statuses.setdefault(tool, set()).add(str(fast["status"]))
        if i % 7 == 0:
            await same_decision(guard, c)
        if i % 5 == 0:
            await guard.engine.goal(f"sentinel_core:sn_drop_session({quote_atom(mod)})")
    # the comparisons compared something: proofs and failures, and the odd rule's error, on both paths
    assert sum("proved" in s for s in statuses.values()) >= len(tools) - 2, statuses
    assert sum(len(s) > 1 for s in statuses.values()) >= 6, statuses


async def test_a_table_made_after_compilation_is_read(guard: PolicyGuard) -> None:
    """The rulebase is compiled before any session: the name's table made later (and one past the bound, in
    '$fact'/5 itself) is what the compiled look-up reads."""
    for session, filler in (("late", 0), ("late_full", 1024)):
        c = call("t__one", {"x": "a"}, session)
        mod = await guard.knowledge.ensure(session, guard.rulebases.current)
        await _fill_tables(guard, mod, filler)
        fast, ref = await both(guard, c)
        assert fast == ref and fast["status"] != "proved", fast
        await guard.engine.assert_facts(mod, [(fact_text("p", ["a"]), FAR, "observed")])
        fast, ref = await both(guard, c)
        assert fast == ref and fast["status"] == "proved", fast
        await guard.engine.retract(mod, "p(_)")
        fast, ref = await both(guard, c)
        assert fast == ref and fast["status"] != "proved", fast


async def test_a_session_never_reads_another_sessions_facts(guard: PolicyGuard) -> None:
    rb = guard.rulebases.current
    owner = await guard.knowledge.ensure("owner", rb)
    await guard.engine.assert_facts(owner, [(fact_text("p", ["a"]), FAR, "observed"),
                                            (fact_text("q", ["a", 3]), FAR, "observed")])
    other = await guard.knowledge.ensure("other", rb)
    # the other session's own tables made in another order; names spelled as a table, '$fact'/5, a built-in
    forged = fact_text("$fact", ["p", "a", "p(a)", FAR, "user"])
    await guard.engine.assert_facts(other, [(fact_text("q", ["z", 1]), FAR, "observed"),
                                            (fact_text("$fact 0", ["a"]), FAR, "observed"),
                                            (forged, FAR, "user"),
                                            (fact_text("nb_getval", ["sn_query", "q"]), FAR, "user")])
    for tool in ("t__one", "t__three", "t__plain", "t__inline", "t__one_n"):
        fast, ref = await both(guard, call(tool, {"x": "a"}, "other"))
        assert fast == ref and fast["status"] != "proved", (tool, fast)
        fast, ref = await both(guard, call(tool, {"x": "a"}, "owner"))
        assert fast == ref, (tool, fast)
    fast, _ = await both(guard, call("t__one", {"x": "a"}, "owner"))
    assert fast["status"] == "proved", fast
