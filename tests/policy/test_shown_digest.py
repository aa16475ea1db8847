"""The digest a confirmation's yes is bound to (``shown_digest/2`` in proof_interpreter.pl) is the SHA-256 of
the text's UTF-8 bytes, whether it comes from the memo of recent texts or is computed: hostile and non-ASCII
texts, texts past the memo's length bound, a memo entry that names another digest (what a stale or planted
entry would leave) for another text; and the memo stays bounded."""

from __future__ import annotations

import hashlib
import random

from sentinel_mcp.policy.engine import shared_engine
from sentinel_mcp.policy.prolog_call import PrologCall
from tests.policy.test_lazy_proofs import HOSTILE

DEFINE = (
    "( current_predicate(user:sn_test_shown/2) -> true ; "
    "assertz((user:sn_test_shown(T, H) :- sentinel_core:shown_digest(T, H))) )"
)


def _digest(text: str) -> str:
    engine = shared_engine()
    engine.run_sync(lambda p: list(p.query(DEFINE)))
    call = PrologCall("user", "sn_test_shown", 2)
    out = engine.run_sync(lambda _: call(text))
    assert isinstance(out, str)
    return out


def test_the_digest_is_sha256_of_the_utf8_text_computed_or_remembered() -> None:
    rng = random.Random(7)
    alphabet = "ab'\\\"\n\t(),:- é日\U0001f600~"
    texts = [*HOSTILE, "", "a", "Cancel this reservation?\nReservation: 8C8K4E", "é", "日本", "\U0001f600",
             "x" * 2048, "y" * 2049, "z" * 20_000]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(200)]
    first = {t: _digest(t) for t in texts}
    for t in texts:  # this round reads what the first kept
        assert _digest(t) == first[t], t
        try:
            want = hashlib.sha256(t.encode("utf-8")).hexdigest()
        except UnicodeEncodeError:  # a lone surrogate: no UTF-8 to compare with, but the same both ways
            continue
        assert first[t] == want, t


def test_texts_that_differ_by_one_character_never_share_a_digest() -> None:
    base = "Cancel this reservation?\nRefund: 120 USD to credit_card_1"
    seen = {_digest(base)}
    for i in range(len(base)):
        changed = base[:i] + ("X" if base[i] != "X" else "Y") + base[i + 1:]
        d = _digest(changed)
        assert d == hashlib.sha256(changed.encode()).hexdigest()
        seen.add(d)
    assert len(seen) == len(base) + 1


def test_the_memo_stays_bounded_and_keeps_short_texts_only() -> None:
    engine = shared_engine()
    rows = engine.run_sync(lambda p: list(p.query(
        "forall(between(1, 9000, I), (format(atom(T), 'text ~d', [I]), sentinel_core:shown_digest(T, _))), "
        "length(L, 3000), maplist(=(0'q), L), atom_codes(Long, L), sentinel_core:shown_digest(Long, _), "
        "aggregate_all(count, sentinel_core:shown_memo(_, _), N), "
        "( sentinel_core:shown_memo(Long, _) -> Kept = kept ; Kept = not_kept )", maxresult=1)))
    assert rows and 0 < rows[0]["N"] <= 4096 and rows[0]["Kept"] == "not_kept", rows


def test_an_entry_for_another_text_is_never_used() -> None:
    """What a stale or planted entry would leave under another text: the text asked for gets its own."""
    engine = shared_engine()
    planted = "sentinel_core:shown_memo('Cancel this reservation?', 'WRONG')"
    engine.run_sync(lambda p: list(p.query(f"assertz({planted})")))
    try:
        for text in ("Cancel this reservation? ", "cancel this reservation?", "Cancel this reservation?\x00"):
            assert _digest(text) == hashlib.sha256(text.encode()).hexdigest(), text
    finally:  # the engine is shared with the other tests: the planted entry goes
        engine.run_sync(lambda p: list(p.query(f"retractall({planted})")))


def test_a_string_or_a_differently_composed_text_is_digested_as_its_own_bytes() -> None:
    """A text given as a string (never kept); the two Unicode spellings of one word (composed, decomposed)."""
    engine = shared_engine()
    rows = engine.run_sync(lambda p: list(p.query(
        "sentinel_core:shown_digest(\"Refund 120 USD\", H1), "
        "sentinel_core:shown_digest(\"Refund 120 USD\", H2)",
        maxresult=1)))
    want = hashlib.sha256(b"Refund 120 USD").hexdigest()
    assert rows and rows[0]["H1"] == rows[0]["H2"] == want, rows
    composed, decomposed = "caf\u00e9", "cafe\u0301"
    assert _digest(composed) == hashlib.sha256(composed.encode()).hexdigest()
    assert _digest(decomposed) == hashlib.sha256(decomposed.encode()).hexdigest()
    assert _digest(composed) != _digest(decomposed)
