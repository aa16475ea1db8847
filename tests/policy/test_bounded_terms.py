"""A rulebase's values written, kept and concatenated within a size (``bounded_terms.pl``).

One inference can make far more than the work it took: ``f(A, A)`` nested N deep is N cells that read as
a tree of 2^N, and ``atom_concat(A, A, B)`` doubles a text. With N from a call's arguments, writing such a
term (a rule's format/3, the proof's text, a confirmation, a question) held the engine, and the event loop
when the decision ran on the caller's thread, for good (no alarm interrupts SWI-Prolog's writer); asserting
it (a need) or 33 doublings of a text killed the process. Each now denies at once (or, for a proof only
shown, shows a placeholder), on the caller's thread and on the engine's, and the next decision is answered.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from sentinel_mcp.config import PolicySettings
from sentinel_mcp.core.decision import Allow, Deny, ToolCall
from tests.policy.policy_rig import make_guard

pytestmark = pytest.mark.timeout(180)

RULES = r"""
dag(0, x) :- !.
dag(N, f(A, A)) :- N1 is N - 1, dag(N1, A).
doubled(A, 0, A) :- !.
doubled(A, K, B) :- atom_concat(A, A, A2), K1 is K - 1, doubled(A2, K1, B).
quadrupled(A, 0, A) :- !.
quadrupled(A, K, B) :- atomic_list_concat([A, A, A, A], A2), K1 is K - 1, quadrupled(A2, K1, B).
joined(A, 0, A) :- !.
joined(A, K, B) :- atomic_list_concat([A, A], A, A2), K1 is K - 1, joined(A2, K1, B).
strings(A, 0, A) :- !.
strings(A, K, B) :- string_concat(A, A, A2), K1 is K - 1, strings(A2, K1, B).
copies(_, 0, []) :- !.
copies(B, K, [B|L]) :- K1 is K - 1, copies(B, K1, L).
askable(seen(_X), "Have you seen ~w?", yes_no, []).
guard('t__fmt_w', [n = N, pad = _], (dag(N, T), format(atom(W), '~w', [T]), W \== '')).
guard('t__fmt_q', [n = N, pad = _], (dag(N, T), format(string(W), 'x ~q y', [T]), W \== "")).
guard('t__fmt_p', [n = N, pad = _], (dag(N, T), format(codes(W), '~p', [T]), W \== [])).
guard('t__fmt_a', [n = N, pad = _], (dag(N, T), format(chars(W), '~a: ~w', [x, T]), W \== [])).
guard('t__confirm', [n = N, pad = _], (dag(N, T), confirmed('Do it with ~w?', [T]))).
guard('t__items', [n = N, pad = _], (dag(17, T), format(atom(B), '~w', [T]), copies(B, N, L),
                                     confirmed_items('Go?', ['Items' = L]))).
guard('t__ask', [n = N, pad = _], (dag(N, T), seen(T))).
guard('t__atom', [n = N, pad = _], (doubled(x, N, A), atom_length(A, L), L > 0)).
guard('t__list', [n = N, pad = _], (quadrupled(x, N, A), atom_length(A, L), L > 0)).
guard('t__sep', [n = N, pad = _], (joined(x, N, A), atom_length(A, L), L > 0)).
guard('t__string', [n = N, pad = _], (strings("x", N, A), string_length(A, L), L > 0)).
guard('t__length', [n = N, pad = _], (length(L, N), msort(L, S), S \== [])).
guard('t__proof', [n = N, pad = _], (dag(N, T), T \== x)).
guard('t__text', [name = X, pad = _], (atom_concat('hi ', X, G), atomic_list_concat([G, '!'], M0),
                                       format(atom(M), '~w', [M0]), M == 'hi bob!',
                                       length(Cs, 3), Cs = [_|_])).
guard('t__wide', [n = _, pad = _], (dag(17, T), format(atom(B), '~w', [T]),
                                   B \== a1, B \== a2, B \== a3, B \== a4, B \== a5, B \== a6, B \== a7,
                                   B \== a8, B \== a9, B \== a10, B \== a11, B \== a12, B \== a13, B \== a14,
                                   B \== a15, B \== a16, B \== a17, B \== a18, B \== a19, B \== a20)).
guard('t__ok', [n = N, pad = _], (integer(N), N =< 10)).
"""

DENIED = [("t__fmt_w", 32), ("t__fmt_q", 40), ("t__fmt_p", 32), ("t__fmt_a", 36), ("t__confirm", 32),
          ("t__items", 40), ("t__ask", 32), ("t__atom", 33), ("t__list", 17), ("t__sep", 33),
          ("t__string", 33), ("t__length", 200_000_000)]


def call(name: str, args: dict) -> ToolCall:
    server, _, tool = name.partition("__")
    return ToolCall(name=name, server=server, tool=tool, arguments=args, session_id="s1")


@pytest.mark.parametrize("pad", [0, 6000], ids=["callers-thread", "engine-thread"])
async def test_a_term_or_text_that_grows_faster_than_its_inferences_is_refused(tmp_path: Path, pad: int):
    """``pad`` decides where the decision runs: small arguments on the caller's thread (the event loop's),
    large ones on the engine's thread (engine.INLINE_ARGUMENT_CHARS)."""
    rb = tmp_path / "growing.pl"
    rb.write_text(RULES)
    g = await make_guard(None, tmp_path / "facts.db", files=[rb], seeds={})
    try:
        assert g.load_error is None, g.load_error
        for name, n in DENIED:
            d = await g.decide(call(name, {"n": n, "pad": "p" * pad}))
            assert isinstance(d, Deny), (name, d)
            assert isinstance(await g.decide(call("t__ok", {"n": 3, "pad": ""})), Allow), name
        # a proof only shown is shown, its huge goal by a placeholder
        d = await g.decide(call("t__proof", {"n": 40, "pad": "p" * pad}))
        assert isinstance(d, Allow), d
        assert "<a term too large to show>" in str(d.proof)
        assert len(str(d.proof)) < 10_000
        # one long text (650,000 characters) in twenty goals: the answer shows at most 8 million in all
        d = await g.decide(call("t__wide", {"n": 1, "pad": "p" * pad}))
        assert isinstance(d, Allow), d
        shown = str(d.proof)
        assert 8_000_000 > len(shown) > 5_000_000 and "<a term too large to show>" in shown, len(shown)
        # texts and lists of ordinary size are made as before
        d = await g.decide(call("t__text", {"name": "bob", "pad": "p" * pad}))
        assert isinstance(d, Allow), d
    finally:
        await g.close()


SPIN = r"""
spin(_, 0) :- !.
spin(L, K) :- msort(L, _), K1 is K - 1, spin(L, K1).
guard('t__spin', [n = N, pad = _], (length(L, N), spin(L, 1000000))).
guard('t__ok', [n = N, pad = _], (integer(N), N =< 10)).
"""


@pytest.mark.parametrize("pad", [0, 6000], ids=["callers-thread", "engine-thread"])
async def test_a_decision_of_long_inferences_is_bounded_in_time(tmp_path: Path, pad: int):
    """Each msort/2 of a million is one inference of ~0.1 s: under the inference limit, a loop of them held
    the engine (and the event loop, on the caller's thread) for hours. A decision has a wall-clock budget too:
    short on the caller's thread (then it is decided again on the engine's), a guard's on the engine's; the
    event loop went on meanwhile, and the next decision is answered."""
    rb = tmp_path / "spin.pl"
    rb.write_text(SPIN)
    # the engine's budget is the guard's (sentinel.policy.guard_timeout)
    g = await make_guard(None, tmp_path / "facts.db", files=[rb], seeds={},
                         settings=PolicySettings(guard_timeout=2.0))
    await g.engine.goal("sentinel_core:sn_guard_seconds(2.0)")  # set at start (fails otherwise)
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.05)
            ticks += 1

    ticker = asyncio.create_task(tick())
    try:
        assert g.load_error is None, g.load_error
        d = await g.decide(call("t__spin", {"n": 1_000_000, "pad": "p" * pad}))
        assert isinstance(d, Deny) and "time budget" in d.reason, d
        assert ticks > 20, ticks  # the event loop ran while the engine's thread worked
        assert isinstance(await g.decide(call("t__ok", {"n": 3, "pad": ""})), Allow)
    finally:
        ticker.cancel()
        await g.close()



MADE = r"""
bad_suffix(zzz).
suffix_free(T) :- \+ ( sub_atom(T, _, _, 0, S), bad_suffix(S) ).
numbered(T, K) :- between(1, K, I), atom_concat(T, I, _), fail.
numbered(_, _).
split_all(T) :- atom_concat(_, _, T), fail.
split_all(_).
shouted(T, K) :- between(1, K, I), atomic_list_concat([T, I], A), upcase_atom(A, _), fail.
shouted(_, _).
guard('m__suffix', [text = T, k = _], suffix_free(T)).
guard('m__kept', [text = T, k = _], (findall(S, sub_atom(T, _, _, 0, S), L), L \== [])).
guard('m__numbered', [text = T, k = K], numbered(T, K)).
guard('m__split', [text = T, k = _], split_all(T)).
guard('m__shouted', [text = T, k = K], shouted(T, K)).
guard('m__format', [text = T, k = K], (between(1, K, I), format(atom(_), '~w ~w', [T, I]), fail ; true)).
guard('m__functor', [text = _, k = K], (functor(F, f, K), arg(1, F, X), var(X))).
guard('m__ok', [text = T, k = _], (sub_atom(T, 0, 3, _, P), atom_concat(P, '!', A), upcase_atom(A, 'AAA!'),
                                   suffix_free(T), functor(F, f, 3), arg(3, F, _))).
"""


async def test_the_text_a_decision_makes_in_all_is_bounded(tmp_path: Path):
    """Each text a rule makes is bounded (above), but not how many: every suffix of a 20,000-character
    argument is 200 million characters of atoms, which live outside SWI-Prolog's stacks (no stack limit holds
    them), and a 300,000-character one took the gateway to 2.8 GB in one decision (a 1 MB argument, the
    largest a call may carry, to tens). ``functor/3`` makes a term of any arity in one step (50 million: 1 GB,
    4 s no alarm interrupts). A decision's rules now make at most 8 million characters of atoms in all, and
    terms of at most a million arguments; past that the decision errs and denies at once."""
    rb = tmp_path / "made.pl"
    rb.write_text(MADE)
    g = await make_guard(None, tmp_path / "facts.db", files=[rb], seeds={})
    text = "a" * 20_000
    try:
        assert g.load_error is None, g.load_error
        for name, k in [("m__suffix", 0), ("m__kept", 0), ("m__numbered", 10_000), ("m__split", 0),
                        ("m__shouted", 10_000), ("m__format", 10_000), ("m__functor", 5_000_000)]:
            d = await g.decide(call(name, {"text": text, "k": k}))
            assert isinstance(d, Deny) and "guard_error" in d.unmet, (name, d)
            d = await g.decide(call("m__ok", {"text": "aaa" + "b" * 1000, "k": 0}))
            assert isinstance(d, Allow), (name, d)
        # on the caller's thread (small arguments, few inferences) too: 5,000 texts of 3,000 characters
        d = await g.decide(call("m__numbered", {"text": "a" * 3000, "k": 5000}))
        assert isinstance(d, Deny) and "guard_error" in d.unmet, d
        # under the bound, the same rules decide as before
        for name, k in [("m__numbered", 100), ("m__shouted", 100), ("m__format", 100), ("m__functor", 1000)]:
            d = await g.decide(call(name, {"text": "a" * 1000, "k": k}))
            assert isinstance(d, Allow), (name, d)
    finally:
        await g.close()
