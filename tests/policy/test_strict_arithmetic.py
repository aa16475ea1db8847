"""A text is never a number to a guard (strict_arithmetic.pl). SWI-Prolog evaluates the atoms e, pi, inf, nan,
epsilon, random, random_float and cputime, a one-element list ([a] is 97, [5] is 5) and a one-character
string, and texts reach a rulebase as atoms and lists from a client's arguments and from tool results: a guard
``N =< 100`` held for the argument "e", and the call went out carrying "e". Every evaluation a rulebase
reaches (comparison, is/2, the list sums and extremes, aggregate_all's sum/max/min, between/3's bound,
format's ~e ~f ~g) now takes numbers only, on every path that runs a rule (compiled, interpreted, a predicate
with a cut, a goal inside forall/findall, under \\+), and the call is denied, never allowed; numbers decide as
before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.core.decision import Allow, Ask, Deny
from sentinel_mcp.policy.fact_store import Fact
from sentinel_mcp.policy.guard import PolicyGuard
from tests.policy.test_compiled_rules import call

pytestmark = pytest.mark.timeout(180)

RULES = r"""
fact(limit/1).
small(N) :- N < 100, !.
guard('t__le', [v = N], N =< 100).
guard('t__lt', [v = N], N < 100).
guard('t__ge', [v = N], N >= -100).
guard('t__gt', [v = N], N > -100).
guard('t__eq', [v = N], N =:= 5).
guard('t__ne', [v = N], N =\= 6).
guard('t__is', [v = N], ( X is N * 2, X =< 200 )).
guard('t__not', [v = N], \+ N > 100).
guard('t__cut', [v = N], small(N)).
guard('t__req', [v = N], require(N =< 100, 'at most 100')).
guard('t__forall', [v = N], forall(member(X, [N]), X =< 100)).
guard('t__findall', [v = N], ( findall(Y, ( member(X, [N]), Y is X + 1 ), [Y1]), Y1 =< 101 )).
guard('t__sum', [v = N], ( sum_list([N, 1], S), S =< 101 )).
guard('t__sumlist', [v = N], ( sumlist([N], S), S =< 100 )).
guard('t__max', [v = N], ( max_list([N, 1], S), S =< 100 )).
guard('t__min', [v = N], ( min_list([N, 200], S), S =< 100 )).
guard('t__aggsum', [v = N], ( aggregate_all(sum(X), member(X, [N, 1]), S), S =< 101 )).
guard('t__aggmax', [v = N], ( aggregate_all(max(X), member(X, [N, 1]), S), S =< 100 )).
guard('t__aggmin', [v = N], ( aggregate_all(min(X, w), member(X, [N, 200]), min(S, _)), S =< 100 )).
guard('t__between', [v = N], between(1, N, 5)).
guard('t__format', [v = N], ( format(atom(T), 'pay ~2f', [N]), atom(T) )).
guard('t__format_d', [v = N], ( format(atom(T), 'seat ~d of ~D', [N, 1000]), atom(T) )).
guard('t__fact', [v = N], ( limit(L), N =< L )).
guard('t__count', [v = N], ( aggregate_all(count, member(_, [N]), C), C =:= 1 )).
"""

NUMERIC = ["t__le", "t__lt", "t__ge", "t__gt", "t__eq", "t__ne", "t__is", "t__not", "t__cut", "t__req",
           "t__forall", "t__findall", "t__sum", "t__sumlist", "t__max", "t__min", "t__aggsum", "t__aggmax",
           "t__aggmin", "t__between", "t__format", "t__format_d"]

# every value SWI-Prolog would evaluate without being a number, as JSON carries it: texts (atoms), arrays
# (lists: [x] is x's code, [5] is 5), objects, and texts that look like numbers
HOSTILE: list[Any] = ["e", "pi", "inf", "infinite", "nan", "epsilon", "random", "random_float", "cputime",
                      "max_tagged_integer", "5", "1e2", "0x10", " 5", "E", "PI", ["a"], [5], [5.0], ["5"],
                      [[5]], {"v": 5}, "", "a", True, None]

# (fast_path, lazy_proofs): compiled, written, interpreted
PATHS = [(True, True), (True, False), (False, False)]


@pytest.fixture
async def guard(tmp_path: Path) -> Any:
    rb = tmp_path / "numbers.pl"
    rb.write_text(RULES)
    g = PolicyGuard([rb], None, store_path=tmp_path / "facts.db")
    await g.start(watch=False)
    assert g.problem is None, g.problem
    yield g
    await g.close()


async def decide(guard: PolicyGuard, name: str, args: dict[str, Any], fast: bool, lazy: bool) -> Any:
    guard.fast_path, guard.lazy_proofs = fast, lazy
    try:
        return await guard.decide(call(name, args, "s"))
    finally:
        guard.fast_path, guard.lazy_proofs = True, False


@pytest.mark.parametrize("fast,lazy", PATHS, ids=["compiled-lazy", "compiled-written", "interpreted"])
async def test_numbers_decide_and_texts_are_never_numbers(guard: PolicyGuard, fast: bool, lazy: bool) -> None:
    for name in NUMERIC:
        good = 5 if name != "t__between" else 10
        d = await decide(guard, name, {"v": good}, fast, lazy)
        assert isinstance(d, Allow), (name, d)
        for bad in HOSTILE:
            d = await decide(guard, name, {"v": bad}, fast, lazy)
            assert isinstance(d, Deny), (name, bad, d)


@pytest.mark.parametrize("fast,lazy", PATHS, ids=["compiled-lazy", "compiled-written", "interpreted"])
async def test_a_tool_results_text_is_not_a_number_either(guard: PolicyGuard, fast: bool, lazy: bool) -> None:
    """A fact learned from a tool's result (hostile, as every result is) compares as a number only if it is
    one."""
    for value, allowed in ((100, True), (2.5, False), ("e", False), ("inf", False), ("pi", False)):
        session = f"s-{value}-{fast}-{lazy}"
        text = f"limit({value})" if not isinstance(value, str) else f"limit('{value}')"
        await guard.knowledge.add([Fact(session=session, predicate="limit", args=[value], fact=text,
                                        provenance="observed")])
        guard.fast_path, guard.lazy_proofs = fast, lazy
        try:
            d = await guard.decide(call("t__fact", {"v": 5}, session))
        finally:
            guard.fast_path, guard.lazy_proofs = True, False
        assert isinstance(d, Allow) is allowed, (value, d)
        assert isinstance(d, (Allow, Deny)), d


async def test_counting_and_other_non_evaluating_aggregates_take_any_value(guard: PolicyGuard) -> None:
    for value in (5, "e", ["a"], {"v": 1}):
        assert isinstance(await guard.decide(call("t__count", {"v": value}, "s")), Allow), value


async def test_a_confirmation_never_shows_a_text_as_a_number(tmp_path: Path) -> None:
    """~2f of the text "e" was "2.72": the person would confirm a refund of 2.72, the call carrying "e"."""
    rb = tmp_path / "refund.pl"
    rb.write_text("guard('t__refund', [amount = A], confirmed('Refund ~2f dollars?', [A])).\n")
    g = PolicyGuard([rb], None, store_path=tmp_path / "facts.db")
    await g.start(watch=False)
    try:
        d = await g.decide(call("t__refund", {"amount": 2.5}, "s"))
        assert isinstance(d, Ask) and "Refund 2.50 dollars?" in str(d.questions[0].model_dump()), d
        for bad in ("e", "pi", "inf", ["a"]):
            d = await g.decide(call("t__refund", {"amount": bad}, "s"))
            assert isinstance(d, Deny), (bad, d)
            assert "2.72" not in str(d) and "3.14" not in str(d)
    finally:
        await g.close()


@pytest.mark.parametrize("body,shown", [
    ("X is pi * 2, X > 0", "pi"), ("N < inf", "inf"), ("N =< e", "e"), ('N =< "9"', '"9"'),
    ("N =< [0'a]", "[97]"), ("N > epsilon", "epsilon"), ("X is random(10), X < N", None),
    ("X is cputime, X < N", "cputime"), ("N =:= nan", "nan"), ("N >= abc * 2", "abc"),
])
async def test_a_rulebase_writing_a_non_number_into_arithmetic_is_refused_at_load(
        tmp_path: Path, body: str, shown: str | None) -> None:
    rb = tmp_path / "bad.pl"
    rb.write_text("ok(N) :- N =< 100.\n" f"guard('t__x', [v = N], ( {body} )).\n")
    g = PolicyGuard([rb], None, store_path=tmp_path / "facts.db")
    await g.start(watch=False)
    try:
        if shown is None:  # random(10) is arithmetic over numbers: loads (and is evaluated as SWI does)
            assert g.problem is None, g.problem
            return
        problem = g.problem or ""
        assert f"{rb}:2:" in problem and "numbers only" in problem and shown in problem, problem
        assert f"{rb}:1:" not in problem
        assert isinstance(await g.decide(call("t__x", {"v": 5}, "s")), Deny)
    finally:
        await g.close()


async def test_strict_arithmetic_survives_a_reload_into_the_same_module(tmp_path: Path) -> None:
    """A module loaded again (sn_unload/1 first) keeps its strict builtins: they are emptied, not abolished
    (SWI-Prolog refuses to abolish a redefined system predicate), and defined again."""
    rb = tmp_path / "numbers.pl"
    rb.write_text(RULES)
    g = PolicyGuard([rb], None, store_path=tmp_path / "facts.db")
    await g.start(watch=False)
    try:
        module = g.rulebases.current.module
        for _ in range(2):
            out = await g.engine.load(module, [str(rb)])
            assert out["errors"] == [], out

            def decided(p: Any, value: str) -> bool:
                q = f"catch(({module}:(V = {value}, V =< 100) -> R = yes ; R = no), _, R = error)"
                return str(next(iter(p.query(q, maxresult=1)))["R"])

            assert await g.engine.run(lambda p: decided(p, "5")) == "yes"
            assert await g.engine.run(lambda p: decided(p, "e")) == "error"
            assert await g.engine.run(lambda p: decided(p, "'[]'")) == "error"
    finally:
        await g.close()
