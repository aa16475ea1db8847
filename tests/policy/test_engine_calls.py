"""The engine's fast plumbing: the compact JSON writer says what the library writer says for any text, and
the direct C call passes any text intact and turns a Prolog error into an EngineError."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from sentinel_mcp.core.decision import ToolCall
from sentinel_mcp.policy.engine import EngineError, shared_engine
from sentinel_mcp.policy.guard import PolicyGuard
from sentinel_mcp.policy.prolog_text import quote_atom

pytestmark = pytest.mark.timeout(60)

NASTY = [
    "",
    "plain",
    'quote " inside',
    "back\\slash",
    "new\nline",
    "tab\t",
    "nul\x00byte",
    "\x01\x1f",
    "é ü 中文",
    "emoji 😀",
    "lone \ud800 surrogate",
    "'single'",
    "}{][,:",
    "\u2028\u2029",
    "a" * 3000,
]


async def test_compact_json_reads_back_as_the_library_writes_it() -> None:
    engine = shared_engine()
    rng = random.Random(3)
    texts = NASTY + [
        "".join(chr(rng.choice([rng.randint(0, 127), rng.randint(128, 0xD7FF)])) for _ in range(40))
        for _ in range(40)
    ]
    for t in texts:
        q = quote_atom(t)
        term = f"json([k={q}, {q}=[{q}, 1, -2.5, @(true), @(null), json([])], n=1.0e18])"
        fast = await engine.json_query(f"sentinel_core:json_text({term}, Out)")
        lib = await engine.json_query(f"json:atom_json_term(Out, {term}, [as(atom)])")
        assert fast == lib == {"k": t, t: [t, 1, -2.5, True, None, {}], "n": 1.0e18}


async def test_terms_the_compact_writer_does_not_know_are_written_or_refused_as_before() -> None:
    engine = shared_engine()
    # a pair written Key-Value, as the library accepts it
    assert await engine.json_query("sentinel_core:json_text(json([a-1]), Out)") == {"a": 1}
    for bad in ("f(x)", "json(nolist)", "@(maybe)", "_"):
        with pytest.raises(EngineError):
            await engine.json_query(f"sentinel_core:json_text(json([a={bad}]), Out)")


async def test_decide_passes_any_text_intact(tmp_path: Path) -> None:
    rb = tmp_path / "echo.pl"
    rb.write_text(
        "fact(seen/1).\nguard('t__echo', [text = T], ( atom(T), atom_length(T, N), N >= 0 )).\n"
        "guard('t__never', [text = T], seen(T)).\n"
    )
    guard = PolicyGuard([rb], None, store_path=tmp_path / "facts.db")
    await guard.start(watch=False)
    try:
        for t in NASTY:
            # session ids are arbitrary text too (a lone surrogate included: the fact store keeps it escaped)
            for session in ("s", t):
                c = ToolCall(
                    name="t__echo", server="t", tool="echo", arguments={"text": t}, session_id=session
                )
                d = await guard.decide(c)
                assert d.kind == "allow", (t, d)
                c = ToolCall(
                    name="t__never", server="t", tool="never", arguments={"text": t}, session_id=session
                )
                d = await guard.decide(c)
                assert d.kind == "deny", (t, d)
    finally:
        await guard.close()


async def test_a_prolog_error_in_a_direct_call_is_an_engine_error_and_the_engine_goes_on(
    tmp_path: Path,
) -> None:
    engine = shared_engine()
    with pytest.raises(EngineError):  # no such rulebase module: sn_decide raises
        await engine.decide("no_such_module", "s", 1.0, "t__x", {}, "d", "v")
    rb = tmp_path / "one.pl"
    rb.write_text("guard('t__one', [n = N], N =< 10).\n")
    guard = PolicyGuard([rb], None, store_path=tmp_path / "facts.db")
    await guard.start(watch=False)
    try:
        c = ToolCall(name="t__one", server="t", tool="one", arguments={"n": 3}, session_id="s")
        assert (await guard.decide(c)).kind == "allow"
        # a guard that raises (arithmetic on an atom) denies with a reference, on both paths
        for fast in (True, False):
            guard.fast_path = fast
            c = ToolCall(name="t__one", server="t", tool="one", arguments={"n": "x"}, session_id="s")
            d = await guard.decide(c)
            assert d.kind == "deny" and "could not be evaluated" in d.reason
    finally:
        await guard.close()


async def test_facts_asserted_in_one_query_are_those_asserted_one_by_one() -> None:
    """``assert_facts`` (one query for the list) holds what ``sn_assert`` of each would: any text as an
    argument, a fact asserted again replaced with its new expiry, the others of the predicate kept."""
    from sentinel_mcp.policy.prolog_text import fact_text

    engine = shared_engine()
    facts = [(fact_text("note", ["r1", t]), 100.0 + i, "observed") for i, t in enumerate(NASTY)]
    seat = fact_text("seat", ["r1", "12A"])
    facts += [(seat, 5.0, "observed"), (seat, 9.0, "user")]
    await engine.assert_facts("s_batch", facts)
    for text, exp, prov in facts:
        await engine.goal(
            f"sentinel_core:sn_assert('s_one', {quote_atom(text)}, {exp!r}, {quote_atom(prov)})"
        )

    async def held(session: str) -> list[list[object]]:
        out = await engine.json_query(
            f"findall([F, E, P], ( sentinel_core:stored_fact({session}, G, E, P), "
            "format(atom(F), '~q', [G]) ), L), sentinel_core:to_json_atom(L, Out)"
        )
        return sorted(out)

    batch = await held("s_batch")
    assert batch == await held("s_one")
    assert len(batch) == len(NASTY) + 1  # the seat asserted twice is held once, as last written
    assert ["seat(r1,'12A')", 9.0, "user"] in batch
    back = await engine.json_query(
        "findall(T, sentinel_core:stored_fact(s_batch, note(r1, T), _, _), L), "
        "sentinel_core:to_json_atom(L, Out)"
    )
    assert sorted(back) == sorted(NASTY)  # every text arrived intact
    await engine.goal("sentinel_core:sn_drop_session('s_batch')")
    await engine.goal("sentinel_core:sn_drop_session('s_one')")
