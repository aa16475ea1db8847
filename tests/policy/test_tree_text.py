"""A proof tree of every node kind, written as JSON text by the engine, reads as its nodes written one by one
(q_atom/2: what writeq/1 writes), with hostile texts and control characters in its goals."""

from __future__ import annotations

import pytest

from sentinel_mcp.policy.engine import shared_engine

pytestmark = pytest.mark.timeout(60)

TERMS = [
    "a", "- 1", "-(1)", "-(-(1))", "a- -1", "1-2", "[a|b]", "{x}", "f(A,B,A)", "A", "1.0e10", "-(a)",
    "'hello world'", "[]", "'[]'", "f(;)", "(a:-b,c;d->e)", "+", "f(+)", "-0.0", "12345678901234567890123",
    "'ABC'", "_", "(a,b)", "f((a,b))", "2- (-1)", "'$VAR'(1)", "'$VAR'('Foo')", "'don''t'", "'\\\\'",
    "f(',')", "\\+ (a,b)", "0'a", "\"a\\\"b\"", "' '", "'\\x1\\'", "f('\\x1\\', \"\\x1\\\")", "g(_X, _Y, _X)",
]


async def _q_atom(term: str) -> str:
    return str(await _json(f"sentinel_core:q_atom({term}, A), sentinel_core:json_text(A, O)"))


async def _json(goal: str) -> object:
    """``goal``'s JSON text O read back (its other variables stay inside findall/3: pyswip reads every
    variable a query names)."""
    return await shared_engine().json_query(f"findall(O, ({goal}), [Out])")


async def test_a_tree_of_every_node_kind_reads_as_written_node_by_node() -> None:
    tree = (
        "and_all([and(fact(p('a b', \"s\"), observed), and(true, not(q(1)))), true, if(builtin(X = 'é'), "
        "rule(r(x), native(s('\\x1\\')))), required(why, policy_ref(doc, 'Anchor \"q\"'), "
        "context(user, f(-1))), unmet(why_not, none), confirmed('Go?', user), call_tool(t__x), "
        "odd(thing, [1,2])])"
    )
    got = await _json(f"X = x, sentinel_core:tree_json({tree}, J), sentinel_core:json_text(J, O)")
    q = _q_atom
    assert got == {"all": [
        {"all": [{"fact": await q("p('a b', \"s\")"), "provenance": "observed"}, {"not": await q("q(1)")}]},
        {"goal": "true"},
        {"if": {"builtin": await q("x = 'é'")},
         "then": {"goal": await q("r(x)"), "by": {"goal": await q("s('\\x1\\')"), "by": "native"}}},
        {"require": "why", "policy": {"document": "doc", "anchor": 'Anchor "q"'},
         "by": {"context": "user", "value": await q("f(-1)")}},
        {"unmet": "why_not", "policy": None},
        {"confirmed": "Go?", "provenance": "user"},
        {"tool": "t__x"},
        {"other": await q("odd(thing, [1,2])")},
    ]}
