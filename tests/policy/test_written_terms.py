"""The text of a goal or fact in a written proof (``q_atom/2`` in answer_json.pl) is exactly what
``writeq/1`` writes, whether the term was written before (its text then comes from the memo of recent
terms) or not: hostile texts, operators, numbers, strings, long and non-ground terms; a hash collision in the
memo never gives another term's text; and the memo stays bounded. A text over a million characters (100
copies of a 200,000-character atom) is shown by a placeholder (bounded_terms.pl)."""

from __future__ import annotations

import random

from sentinel_mcp.policy.engine import shared_engine
from sentinel_mcp.policy.prolog_call import PrologCall
from tests.policy.test_lazy_proofs import HOSTILE

# for one atom A: terms built around it (no parsing of A), each written twice by q_atom (the first may fill
# the memo, the second reads it) and once by writeq; Out is ok or the first term that differs
CHECK = r"""
user:sn_test_q(A, Out) :-
    atom_length(A, N), length(Long, 100), maplist(=(A), Long),
    Big is 2 ** 100 + N, Inf is inf, NaN is nan, X = f(X),
    Terms = [A, f(A), g(A, 1.5, "s", [A, 'B c'], json([k=A])), A-A, [A|t], -(A), -(1), 1 - -1, - (-(1)),
             (A :- b), (a, A), {A}, '{}'(A), '[]', [], "str'\"\\", A:A, f(_), f(A, _, _B), p(Long), Big, -Big,
             Inf, NaN, -0.0, 1.0e300, f(Inf), X, 'hello world'(A), [A, A], @(A), 'a\\b'(A), (A = B, B = A)],
    (   member(T, Terms),
        copy_term(T, T1),
        sentinel_core:new_shown_room,  % each term its own answer (a proof's long texts share one room)
        % no garbage collection between the three writes: it may move a variable, and a variable's name
        % (_123) is its place on the stack
        setup_call_cleanup(set_prolog_flag(gc, false),
                           ( sentinel_core:q_atom(T1, Q1), sentinel_core:q_atom(T1, Q2),
                             with_output_to(atom(W0), writeq(T1)) ),
                           set_prolog_flag(gc, true)),
        ( atom_length(W0, L), L > 1000000 -> sentinel_core:too_large_shown(W) ; W = W0 ),
        \+ ( Q1 == W, Q2 == W )
    ->  format(atom(Out), '~q: ~q / ~q / ~q', [T1, Q1, Q2, W])
    ;   Out = ok
    ).
"""


def _define() -> None:
    engine = shared_engine()
    engine.run_sync(lambda p: list(p.query(
        "( current_predicate(user:sn_test_q/2) -> true ; "
        "read_term_from_atom(" + _quoted(CHECK.strip().rstrip(".")) + ", C, []), assertz(C) )")))


def _quoted(text: str) -> str:
    from sentinel_mcp.policy.prolog_text import quote_atom

    return quote_atom(text)


def test_a_terms_text_is_what_writeq_writes_written_before_or_not() -> None:
    _define()
    engine = shared_engine()
    check = PrologCall("user", "sn_test_q", 2)
    rng = random.Random(5)
    atoms = [*HOSTILE, "", "a", "A", "_", "[]", "{}", "'", '"', "\\", "\x00", "é", "日本", "\U0001f600",
             "x" * 700, "1", "-1", "1.5e10", "a b", "f(x)", ":-", ",", "|", "end_of_file"]
    alphabet = "ab'\\\"\n\t(),:- é"
    atoms += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(150)]
    for _ in range(2):  # the second round reads every term from the memo the first filled
        for a in atoms:
            out = engine.run_sync(lambda _, a=a: check(a))
            assert out == "ok", (a, out)


def test_a_hash_collision_never_gives_another_terms_text() -> None:
    """A memo entry under a term's hash but for another term (what a collision would leave) is not used."""
    engine = shared_engine()
    rows = engine.run_sync(lambda p: list(p.query(
        "T = reservation_user('8C8K4E', someone), term_hash(T, H), "
        "assertz(sentinel_core:q_memo(H, other_term, 'WRONG')), sentinel_core:q_atom(T, A), "
        "with_output_to(atom(W), writeq(T))", maxresult=1)))
    assert rows and rows[0]["A"] == rows[0]["W"] == "reservation_user('8C8K4E',someone)", rows


def test_the_memo_stays_bounded_and_keeps_short_texts_only() -> None:
    engine = shared_engine()
    rows = engine.run_sync(lambda p: list(p.query(
        "forall(between(1, 9000, I), sentinel_core:q_atom(t(I, x), _)), "
        "length(L, 700), maplist(=(a), L), sentinel_core:q_atom(long(L), _), "
        "aggregate_all(count, sentinel_core:q_memo(_, _, _), N), "
        "( sentinel_core:q_memo(_, long(_), _) -> Long = kept ; Long = not_kept )", maxresult=1)))
    assert rows and 0 < rows[0]["N"] <= 4096 and rows[0]["Long"] == "not_kept", rows
