"""proof_json/2 (prolog/proof_json.pl) writes a proof tree exactly as tree_json/2 (answer_json.pl) does: the
same term, the same variable names, the same room left for long texts, the same bindings, compared in one
Prolog call on the same tree (the old renderer and the new side by side, byte for byte), over the proofs of
generated airline decisions, over trees made of every clause of every shipped rulebase, and over trees made to
leave the joined write (a raw line break, a long text, a cyclic goal, a tree the walk would bind)."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from sentinel_mcp.core.decision import Allow, Answer, Ask
from sentinel_mcp.core.lazy_proof import LazyProof
from sentinel_mcp.paths import RULEBASES_DIR
from sentinel_mcp.policy.engine import KeptProof
from sentinel_mcp.policy.guard import PolicyGuard
from sentinel_mcp.policy.prolog_text import quote_atom
from tests.policy.test_compiled_rules import call

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(180)

# both renderers on the same tree (the case's goal binds Tree; Room: the answer's room before), each inside
# \+ \+ (a binding either makes is undone before the other runs; the variables keep their names): the text of
# what each gives, the room it leaves and the tree's variables as it leaves them (writeq/1: by their names),
# compared byte for byte; garbage collection off meanwhile (it moves the variables, and a variable's name is
# its place). Defined in a module of the test's own (a query's variables are all converted to Python values).
SIDE_BY_SIDE = r"""
:- module(proof_json_test, [side_by_side/4]).
side_by_side(GoalText, Room, Same, Shown) :-
    term_string(G, GoalText, [variable_names(Vs)]), memberchk('Tree' = Tree, Vs), once(G),
    current_prolog_flag(gc, GC),
    setup_call_cleanup(set_prolog_flag(gc, false), both(Tree, Room), set_prolog_flag(gc, GC)),
    nb_getval(sn_cmp_old, Old), nb_getval(sn_cmp_new, Shown), ( Old == Shown -> Same = yes ; Same = no ).
both(Tree, Room) :-
    \+ \+ ( nb_linkval(sn_shown_room, Room), sentinel_core:tree_json(Tree, A), nb_getval(sn_shown_room, RA),
            term_variables(Tree, VA), format(atom(SA), '~q', [r(A, RA, VA)]), nb_setval(sn_cmp_old, SA) ),
    \+ \+ ( nb_linkval(sn_shown_room, Room), sentinel_core:proof_json(Tree, B), nb_getval(sn_shown_room, RB),
            term_variables(Tree, VB), format(atom(SB), '~q', [r(B, RB, VB)]), nb_setval(sn_cmp_new, SB) ).
"""


async def side_by_side(guard: PolicyGuard, tree_goal: str, room: int = 8_000_000) -> dict[str, str]:
    """``tree_goal`` binds Tree; both renderers' agreement on it."""
    q = f"proof_json_test:side_by_side({quote_atom(tree_goal)}, {room}, Same, Shown)"
    rows = await guard.engine.run(lambda p: list(p.query(q, maxresult=1)))
    assert rows, tree_goal
    return {k: (v.decode() if isinstance(v, bytes) else str(v)) for k, v in rows[0].items()}


async def with_side_by_side(guard: PolicyGuard, tmp_path: Path) -> PolicyGuard:
    f = tmp_path / "proof_json_test.pl"
    f.write_text(SIDE_BY_SIDE)
    # the process's one engine keeps it for the tests after
    await guard.engine.goal(f"( current_predicate(proof_json_test:side_by_side/4) -> true "
                            f"; load_files({quote_atom(str(f))}, []) )")
    return guard


def agree(out: dict[str, str]) -> bool:
    return out["Same"] == "yes"


async def kept_side_by_side(guard: PolicyGuard, kept: KeptProof) -> dict[str, str]:
    """Both renderers on a kept proof's tree (its variables as the gateway's rendering sees them), then it is
    forgotten."""
    out = await side_by_side(guard, f"sentinel_core:kept_proof({kept.id}, Tree, _)")
    await guard.engine.goal(f"sentinel_core:sn_forget_kept_proof({kept.id}, _)")
    return out


async def test_airline_proofs_are_written_as_tree_json_writes_them(tmp_path: Path) -> None:
    """Calls of the airline example (its real MCP server, the guard fetching what it needs), the questions
    answered (a reason drawn from its choices, the confirmation given): every allowed call's kept proof."""
    from mcp import Client

    from benchmarks.guard_latency import DirectPort, airline_server

    db = json.loads((ROOT / "examples" / "airline" / "data" / "db.json").read_text())
    rng = random.Random(2112)
    reservations = rng.sample(sorted(db["reservations"].values(), key=lambda r: r["reservation_id"]), 24)
    tools = [("cancel_reservation", lambda r: {"reservation_id": r["reservation_id"]}),
             ("update_reservation_baggages", lambda r: {"reservation_id": r["reservation_id"],
                                                        "total_baggages": rng.randint(0, 3),
                                                        "nonfree_baggages": 0,
                                                        "payment_id": next(iter(
                                                            db["users"][r["user_id"]]["payment_methods"]))}),
             ("send_certificate", lambda r: {"user_id": r["user_id"], "amount": 100})]
    allowed, with_variables = 0, 0
    async with Client(airline_server(), mode="auto") as client:
        port = DirectPort(client, "airline")
        await port.refresh()
        for i, r in enumerate(reservations):
            guard = PolicyGuard([RULEBASES_DIR / "airline.pl"], port, store_path=tmp_path / f"f{i}.db",
                                seeds={"current_user": r["user_id"]}, lazy_proofs=True)
            await guard.start(watch=False)
            await with_side_by_side(guard, tmp_path)
            try:
                for tool, args in tools:
                    c = call(f"airline__{tool}", args(r), f"s{i}{tool}")
                    d = await guard.decide(c, spend=False)
                    for _ in range(3):
                        if not isinstance(d, Ask):
                            break
                        for q in d.questions:
                            prop = q.requested_schema["properties"]["answer"]
                            enum = [v for v in [*(prop.get("enum") or []), *(o.get("const") for o in
                                                                            prop.get("oneOf") or [])]
                                    if v not in ("i_dont_know", None)]
                            value = True if q.meta["kind"] == "confirm" else rng.choice(enum or ["x"])
                            answer = Answer(action="accept", content={"answer": value})
                            await guard.record_answer(c, q, answer)
                        d = await guard.decide(c, spend=False)
                    if not isinstance(d, Allow) or not isinstance(d.proof, LazyProof):
                        continue
                    kept = d.proof._render.args[1]  # type: ignore[attr-defined]  # partial(_rendered_kept, rb, kept)
                    allowed += 1
                    got = await kept_side_by_side(guard, kept)
                    assert agree(got), (c, got["Shown"][:2000])
                    with_variables += bool(re.search(r"\b_[0-9]+\b", got["Shown"]))
            finally:
                await guard.close()
    assert allowed >= 10, allowed  # cancels and certificates allowed, their proofs with variables
    assert with_variables >= 5, with_variables


@pytest.mark.parametrize("name", sorted(p.name for p in RULEBASES_DIR.glob("*.pl")))
async def test_every_clause_of_a_shipped_rulebase_is_written_as_tree_json_writes_it(
    tmp_path: Path, name: str
) -> None:
    """Trees of each rule of the rulebase (its head and body, variables unbound: the texts a proof shows of
    its builtins and negations), one by one and all in one tree (one answer's room)."""
    guard = PolicyGuard([RULEBASES_DIR / name], None, store_path=tmp_path / "facts.db")
    await guard.start(watch=False)
    await with_side_by_side(guard, tmp_path)
    try:
        assert guard.rulebases.loaded, guard.load_error
        rb = quote_atom(guard.rulebases.current.module)
        clauses = (f"findall(rule(H, and(builtin(B), not(H))), ( current_predicate({rb}:P/N), "
                   f"functor(H, P, N), \\+ predicate_property({rb}:H, imported_from(_)), "
                   f"catch(clause({rb}:H, B), _, fail) ), Rs)")
        rows = await guard.engine.run(lambda p: list(p.query(f"{clauses}, length(Rs, Len)", maxresult=1)))
        count = int(rows[0]["Len"])
        assert count > 0
        for i in range(count):
            out = await side_by_side(guard, f"{clauses}, nth0({i}, Rs, Tree)")
            assert agree(out), (name, i, out)
        out = await side_by_side(guard, f"{clauses}, Tree = and_all(Rs)")
        assert agree(out), (name, out)
    finally:
        await guard.close()


# trees made to leave the joined write, or to test its edges; each compared with tree_json/2 as it is
EDGE_TREES = [
    "Tree = builtin(f(_, 'a\\nb', \"s\\nt\"))",  # line breaks inside quoted texts: escaped by writeq
    "Tree = and_all([builtin(f('$VAR'('x\\ny'), _)), not(g(_))])",  # a raw line break ('$VAR')
    "Tree = and_all([builtin(f('$VAR'('Z'), _)), not(g(_))])",
    "length(Cs, 600), maplist(=(0'q), Cs), atom_codes(L, Cs), "
    "Tree = and_all([builtin(f(_, L)), not(g(_))])",  # a long text: counted against the room
    "length(Cs, 511), maplist(=(0'q), Cs), atom_codes(L, Cs), Tree = builtin(f(_, L))",
    "X = f(X, _), Tree = and_all([builtin(g(_)), builtin(X)])",  # a cyclic goal
    "Tree = and_all([builtin(f(_)), _])",  # a tree node unbound: tree_json binds it
    "Tree = and_all([builtin(f(X)), X])",  # ... after writing a goal that holds it
    "Tree = and_all([not(g(X, _)), if(X, builtin(h(_)))])",
    "Tree = and_all([builtin(f(A)), and(builtin(g(A)), and(true, not(h(A, _))))])",  # nested conjunctions
    "Tree = and_all([builtin(f(_))|_])",  # a partial list
    "Tree = if(builtin(f(A, B)), rule(h(A), not(k(B))))",  # shared variables across goals
    "Tree = required(why(_), policy_ref(doc, 'Anchor'), builtin(f(_)))",
    "Tree = and_all([context(n, v(_)), fact(p(_), observed), native(q(_)), other(_), confirmed(m, user)])",
    "Tree = and_all([builtin(- 1), builtin(- (1)), builtin(a- (-1)), builtin(f(_, -)), builtin((:- _))])",
    "Tree = builtin([a|_])",
    # a focus read with its checks (bound_contexts.pl), and a node only tree_json/2 knows (written by it)
    "Tree = checked_context(n, v(_), [fact(p(_, 'BK-1'), observed), and(builtin(f(_)), not(g(_)))])",
    "Tree = and_all([made_up_node(_, x), builtin(f(_))])",
    "numlist(1, 50000, L), Tree = builtin(f(_, L))",  # a long text written (over 512, under the bound)
    "length(L, 300000), maplist(=(abc), L), Tree = builtin(f(_, L))",  # over max_text_chars: too large
    # a goal of 2**40 leaves, 41 cells shared: its text is never written out (a placeholder), by either
    "length(L, 40), foldl([_, A0, f(A0, A0)]>>true, L, g(_), T), Tree = and_all([not(T), builtin(h(_))])",
]


@pytest.mark.parametrize("case", range(len(EDGE_TREES)))
async def test_edge_trees_are_written_as_tree_json_writes_them(tmp_path: Path, case: int) -> None:
    rb = tmp_path / "one.pl"
    rb.write_text("guard('t__x', [], true).\n")
    guard = PolicyGuard([rb], None, store_path=tmp_path / "facts.db")
    await guard.start(watch=False)
    await with_side_by_side(guard, tmp_path)
    try:
        for room in (8_000_000, 1_000, 0):
            out = await side_by_side(guard, EDGE_TREES[case], room)
            assert agree(out), (EDGE_TREES[case], room, out)
    finally:
        await guard.close()
