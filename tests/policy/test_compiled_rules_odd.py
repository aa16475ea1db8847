"""The compiled rules (the fast path) against the interpreter (the reference) where the policy in words is
subtle: values still unknown (assumed while they are fetched or asked, tainted for later questions), requires
nested and failing on unknowns, choices read off facts, "I don't know", a stored "no" - and where the facts
are
hostile: many spellings of a value, huge, deep or odd terms, facts of the wrong arity, answers that are not a
choice. Every field of the engine's answer and of the guard's decision must be the same on both paths."""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import pytest
from tests.policy.test_compiled_rules import R_TOOL, airline_call, airline_facts, both, call, fetched, unnamed

from sentinel_mcp.core.decision import ToolCall
from sentinel_mcp.paths import RULEBASES_DIR
from sentinel_mcp.policy.guard import PolicyGuard
from tests.policy.confirmation_facts import plant_confirmation
from sentinel_mcp.policy.prolog_text import fact_text

pytestmark = pytest.mark.timeout(180)

FAR = time.time() + 10 * 365 * 86400  # far past any run of the suite


async def same_decision(guard: PolicyGuard, c: ToolCall, facts: list[tuple[str, float | None, str]]) -> None:
    """The guard's decision on each path, each in a session of its own holding the same facts (a decision may
    change its session: "I don't know" is forgotten once it ended a call)."""
    seen = []
    for fast in (True, False):
        session = f"{c.session_id}/{fast}"
        await guard.engine.assert_facts(await guard.knowledge.ensure(session, guard.rulebases.current), facts)
        guard.fast_path = fast
        d = await guard.decide(c.model_copy(update={"session_id": session}))
        for f in (getattr(d, "proof", None) or {}).get("fetches", []):
            f.pop("started"), f.pop("ended")  # when a (failed) fetch ran
        seen.append(
            unnamed(
                {
                    "kind": d.kind,
                    "reason": d.reason,
                    "unmet": getattr(d, "unmet", None),
                    "proof": getattr(d, "proof", None),
                    "how": getattr(d, "how_to_unblock", None),
                    "questions": [(q.key, q.message) for q in getattr(d, "questions", [])],
                }
            )
        )
    guard.fast_path = True
    assert seen[0] == seen[1], c


WORDS = """
fact(p/1). fact(q/2).
binding(price(X, P), tool('t__get', [x = X]), extract([P = '/price']), [ttl(60)]).
binding(owner(X, U), tool('t__get', [x = X]), extract([U = '/owner']), [ttl(60)]).
askable(reason(X, R), "Why ~w?", choice([a - 'Reason A', b - 'Reason B']), [from([user])]).
askable(pick(U, X), "Which of the things of ~w?", choice_of(X, L, thing_label(U, X, L)), [from([user])]).
askable(sure(X), "Sure about ~w?", yes_no, [from([user]), unknown(as(yes))]).
askable(size(X, N), "How big is ~w?", number, [from([user, agent]), unknown('Measure it first')]).
thing_label(U, X, L) :- q(U, X), format(atom(L), 'thing ~w', [X]).
cheap(X) :- price(X, P), P < 100.
mine(X) :- owner(X, U), U == me.
priced(X) :- price(X, P), require(P > 1, 'a positive price').
source(X, S) :- ( p(X), S = p ; q(X, S) ; price(X, S) ).
guard('t__or', [x = X], ( source(X, S), require(S \== bad, 'not bad'), confirmed('From ~w?', [S]) )).
guard('t__buy', [x = X], ( require(cheap(X), 'must be cheap'), require(mine(X), 'must be mine'), reason(X, R),
                           humanized(R, RT), confirmed('Buy ~w for ~w?', [X, RT]) )).
guard('t__pick', [u = U], ( pick(U, X), require(p(X), 'the thing must be p'),
                            confirmed_items('Pick?', ['Thing' = X, 'Owner' = U]) )).
guard('t__size', [x = X], ( size(X, N), require(N > 3, 'big enough'), sure(X) )).
guard('t__deep', [x = X], ( require(priced(X), 'priced'), owner(X, U), require(\\+ p(U), 'the owner is not p') )).
guard('t__unknown', [x = X], ( price(X, P), humanized(P, H), reason(X, R), answer_label(reason, R, L),
                               format(atom(_), '~w ~w', [H, L]), sure(X) )).
guard('t__arith', [x = X], ( price(X, P), Q is P * 2, require(Q < 50, 'twice the price under 50'),
                             confirmed('Pay ~w?', [Q]) )).
"""  # noqa: E501 (verbatim text)


def odd_values(rng: random.Random, x: str) -> list[Any]:
    """Many spellings of a value, and terms nobody expects."""
    return [
        x,
        x.upper(),
        f" {x}",
        f"{x}\u200b",
        f"{x}'",
        f'{x}"',
        f"{x}\\",
        "é",
        "中文",
        "lone \ud800",
        "😀",
        "",
        "a" * 5000,
        0,
        -1,
        2**200,
        1.5,
        -0.0,
        1e308,
        True,
        None,
        [],
        [x] * 300,
        {"k": x, "deep": [[[[x]]]]},
        [{"a": 1}, {"a": [1, 2, {"b": None}]}],
        "_",
        "_G12",
        "X",
        "[]",
        "'$fact'",
        rng.choice(["me", "you", "ME"]),
    ]


def words_facts(rng: random.Random, x: str, u: str) -> list[tuple[str, float | None, str]]:
    out: list[tuple[str, float | None, str]] = []
    odd = odd_values(rng, x)

    def add(text: str, prov: str = "observed") -> None:
        out.append((text, FAR, prov))

    if rng.random() < 0.6:  # the item was fetched: its price and owner are known (or known absent)
        add(fetched("price", 2, "t__get", {"x": x}))
        add(fetched("owner", 2, "t__get", {"x": x}))
        if rng.random() < 0.8:
            add(fact_text("price", [x, rng.choice([5, 20, 40, 150])]))
        if rng.random() < 0.8:
            add(fact_text("owner", [x, rng.choice(["me", "me", "you"])]))

    for _ in range(rng.randint(0, 12)):
        kind = rng.choice(
            [
                "p",
                "q",
                "price",
                "owner",
                "reason",
                "pick",
                "sure",
                "no",
                "dont_know",
                "size",
                "fetched",
                "arity",
                "deep",
            ]
        )
        v = rng.choice([x, x, u, "me"] + odd)
        if kind == "p":
            add(fact_text("p", [v]), rng.choice(["observed", "user", "agent"]))
        elif kind == "q":
            add(fact_text("q", [rng.choice([u, x]), rng.choice([x, v, "t1", "t2", "bad"])]))
        elif kind == "price":
            add(fact_text("price", [x, rng.choice([5, 20, 40, 150, 0, -3, 1.5, v])]))
        elif kind == "owner":
            add(fact_text("owner", [x, rng.choice(["me", "me", "you", v])]))
        elif kind == "reason":
            add(fact_text("reason", [x, rng.choice(["a", "b", "c", v])]), rng.choice(["user", "agent"]))
        elif kind == "pick":
            add(fact_text("pick", [u, rng.choice([x, "t1", v])]), rng.choice(["user", "agent"]))
        elif kind == "sure":
            add(fact_text("sure", [x]), rng.choice(["user", "agent"]))
        elif kind == "no":
            add(fact_text("$answered_no", ["sure", [x]]), "user")
        elif kind == "dont_know":
            add(fact_text("$dont_know", [rng.choice(["sure", "size", "reason"]), [x]]), "user")
        elif kind == "size":
            add(fact_text("size", [x, rng.choice([1, 4, 10, 2.5, v])]), rng.choice(["user", "agent"]))
        elif kind == "fetched":
            add(fetched("price", 2, "t__get", {"x": x}))
            add(fetched("owner", 2, "t__get", {"x": x}))
        elif kind == "arity":  # the same names with other arities, and compound first arguments
            add(fact_text("price", [x]))
            add(fact_text("p", [x, v]))
            add(f"q(f({fact_text('k', [v])}),{fact_text('k', [x])})")
        else:  # a deep term
            add("p(" + "f(" * 300 + fact_text("k", [x]) + ")" * 300 + ")")
    return out


async def test_unknown_values_and_odd_facts_fast_and_reference_identical(tmp_path: Path) -> None:
    rb = tmp_path / "words.pl"
    rb.write_text(WORDS)
    guard = PolicyGuard([rb], None, store_path=tmp_path / "facts.db")
    await guard.start(watch=False)
    tools = sorted(guard.rulebases.current.info.guards)
    rng = random.Random(18)
    statuses: dict[str, set[str]] = {}
    try:
        for i in range(40 * len(tools)):
            session, x, u = f"w{i}", rng.choice(["k1", "k2", "t1"]), rng.choice(["me", "u1"])
            tool = tools[i % len(tools)]
            args = {"u": u} if tool == "t__pick" else {"x": rng.choice([x, x, x] + odd_values(rng, x))}
            c = call(tool, args, session)
            mod = await guard.knowledge.ensure(session, guard.rulebases.current)
            facts = words_facts(rng, x, u)
            confirm = rng.random() < 0.4
            await guard.engine.assert_facts(mod, facts)
            if confirm:
                await plant_confirmation(guard, c, "user")
            fast, ref = await both(guard, c)
            assert fast == ref, (c, facts)
            statuses.setdefault(tool, set()).add(fast["status"])
            if i % 5 == 0:
                await same_decision(guard, c, facts)
    finally:
        await guard.close()
    every = set().union(*statuses.values())
    assert {"proved", "failed", "incomplete"} <= every, statuses
    assert all(len(s) >= 2 for s in statuses.values()), statuses  # each guard seen with two outcomes at least


async def test_airline_with_hostile_facts_fast_and_reference_identical(tmp_path: Path) -> None:
    """The airline guards over facts of their own predicates with odd values (wrong types, other spellings,
    unparsable dates, huge lists): errors and all, both paths answer the same."""
    guard = PolicyGuard(
        [RULEBASES_DIR / "airline.pl"],
        None,
        store_path=tmp_path / "facts.db",
        seeds={"current_user": "amelia_davis_8890"},
    )
    await guard.start(watch=False)
    rng = random.Random(2121)
    kinds: dict[str, int] = {}
    try:
        for i in range(60):
            session, r, user = f"h{i}", f"R{i:04d}", "amelia_davis_8890"
            c = airline_call(rng, r, user, session)
            mod = await guard.knowledge.ensure(session, guard.rulebases.current)
            facts = airline_facts(rng, r, user)
            for _ in range(rng.randint(1, 8)):
                v = rng.choice(odd_values(rng, r))
                pred = rng.choice(
                    [
                        "reservation_user",
                        "reservation_cabin",
                        "reservation_created",
                        "reservation_insurance",
                        "reservation_status",
                        "cancel_reason",
                        "flight_status",
                    ]
                )
                args = [r, v] if pred != "flight_status" else ["HAT100", "2024-05-24", v]
                facts.append((fact_text(pred, args), FAR, rng.choice(["observed", "user", "agent"])))
                if rng.random() < 0.3:
                    facts.append(
                        (fact_text("reservation_baggage", [r, v, rng.choice([0, v])]), FAR, "observed")
                    )
                if rng.random() < 0.2:
                    facts.append(
                        (fetched("reservation_user", 2, R_TOOL, {"reservation_id": v}), FAR, "observed")
                    )
            await guard.engine.assert_facts(mod, facts)
            fast, ref = await both(guard, c)
            assert fast == ref, (c, facts)
            kinds[fast["status"]] = kinds.get(fast["status"], 0) + 1
            if i % 4 == 0:
                await same_decision(guard, c, facts)
    finally:
        await guard.close()
    assert {"proved", "failed", "incomplete"} <= set(kinds), kinds
