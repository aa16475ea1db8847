"""A base predicate called natively (inside findall/forall/aggregate_all, where a rule's body is not compiled
goal by goal) goes through its wrapper in the rulebase's module. The wrapper is settled once the rulebase is
loaded (rulebase_loading.pl's settle_base_wrappers/1): the look-up base_native/3 makes on every call, with the
predicate's bindings and askables written out as a compiled rule's base goal has them. Each must answer as
base_native/3 does: the same solutions in the same order, the same fetches needed, the same assumptions."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from tests.policy.policy_rig import make_guard

from sentinel_mcp.policy.prolog_text import quote_atom

pytestmark = pytest.mark.timeout(90)

RULES = """
fact(plain/2).
fact(flag/0).
binding(order(Id, S), tool('shop__get_order', [id = Id]), extract([S = '/status']), [ttl(60)]).
binding(order(Id, S), tool('shop__order_again', [id = Id]), extract([S = '/status']), [ttl(60)]).
binding(flag, tool('shop__flag', []), extract([]), [ttl(60)]).
askable(ok_to(U, W), "May ~w do ~w?", yes_no, []).
guard('shop__x', [user = U],
      ( findall(S, order(U, S), _), findall(V, plain(U, V), _), \\+ flag, \\+ ok_to(U, w) )).
"""

NOW = time.time()
FAR, GONE = NOW + 3600, NOW - 10
# valid, expired and missing facts and fetch markers (a marker: '$fetched'(Name, Arity, Tool, json(Args)))
FACTS = [
    ("plain(u1, a)", FAR, "observed"), ("plain(u1, b)", FAR, "observed"), ("plain(u1, c)", GONE, "observed"),
    ("plain(u2, a)", FAR, "observed"),
    ("order(o1, open)", FAR, "observed"), ("order(o1, shut)", FAR, "observed"),
    ("order(o2, open)", FAR, "observed"),
    ("'$fetched'(order, 2, 'shop__get_order', json([id=o1]))", FAR, "observed"),
    ("'$fetched'(order, 2, 'shop__order_again', json([id=o1]))", FAR, "observed"),
    ("'$fetched'(order, 2, 'shop__get_order', json([id=o2]))", GONE, "observed"),
    ("ok_to(u1, w)", FAR, "user"),
]
GOALS = ["plain(u1, V)", "plain(U, V)", "plain(u1, b)", "plain(u3, V)", "order(o1, S)", "order(o2, S)",
         "order(o3, S)", "order(I, S)", "flag", "ok_to(u1, w)", "ok_to(u2, w)", "ok_to(U, W)"]


def outcome(rb: str, mod: str, goal: str, how: str) -> str:
    """The goal's solutions, the needs recorded and whether anything was assumed, from a fresh query state;
    ``how``: through the rulebase's wrapper, or base_native/3 itself."""
    call = f"{rb}:({goal})" if how == "wrapper" else f"sentinel_core:base_native(N, A, ({goal}))"
    return (
        f"sentinel_core:begin_query({rb}, {mod}, {NOW!r}, none), G0 = ({goal}), functor(G0, N, A), "
        f"findall(G0, {call.replace(f'({goal})', 'G0')}, Ls), findall(Nd, sentinel_core:need(Nd), Ns), "
        f"( sentinel_core:cur(assumed, true) -> As = true ; As = false )"
    )


async def test_a_settled_wrapper_answers_as_base_native(tmp_path: Path) -> None:
    rb_file = tmp_path / "shop.pl"
    rb_file.write_text(RULES)
    guard = await make_guard(None, tmp_path / "facts.db", files=[rb_file], seeds={})
    try:
        rb = guard.rulebases.current
        mod = await guard.knowledge.ensure("s", rb)
        await guard.engine.assert_facts(mod, FACTS)
        rbq, modq = quote_atom(rb.module), quote_atom(mod)
        # every wrapper is settled: none looks the rulebase up again on each call
        rows = await guard.engine.run(lambda p: list(p.query(
            f"findall(N/A, ( {rbq}:'$wrapped'(N/A), functor(H, N, A), "
            f"clause({rbq}:H, sentinel_core:base_native(_, _, _)) ), L)", maxresult=1)))
        assert rows[0]["L"] == [], rows
        seen_needs = seen_assumed = 0
        for goal in GOALS:
            got = {}
            for how in ("wrapper", "base_native"):
                q = outcome(rbq, modq, goal, how) + (", copy_term(Ls-Ns-As, T, _), numbervars(T, 0, _), "
                                                   "format(atom(Out), '~q', [T])")
                rows = await guard.engine.run(lambda p, q=q: list(p.query(q, maxresult=1)))
                got[how] = str(rows[0]["Out"])
            assert got["wrapper"] == got["base_native"], (goal, got)
            seen_needs += "fetch(" in got["wrapper"]
            seen_assumed += got["wrapper"].endswith("-true")
        assert seen_needs and seen_assumed  # the cases that record a fetch and assume were met
    finally:
        await guard.close()
