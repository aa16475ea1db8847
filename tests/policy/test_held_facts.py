"""The policy guard's facts as the console reads and revokes them (``Guard.session_facts``): a real guard, a
real
SQLite store, real Prolog; a revoked fact no longer proves anything, and only an exact fact text revokes."""

from __future__ import annotations

from pathlib import Path

from sentinel_mcp.core.decision import ToolCall
from sentinel_mcp.policy.guard import PolicyGuard

RULES = "fact(seen/1).\nguard('t__seen', [text = T], seen(T)).\n"


def seen(text: str, session: str) -> ToolCall:
    return ToolCall(name="t__seen", server="t", tool="seen", arguments={"text": text}, session_id=session)


async def test_facts_are_read_and_revoked_through_the_guard(tmp_path: Path) -> None:
    rb = tmp_path / "seen.pl"
    rb.write_text(RULES)
    guard = PolicyGuard([rb], None, store_path=tmp_path / "facts.db")
    await guard.start(watch=False)
    try:
        view = guard.session_facts()
        await guard.knowledge.add(
            [
                await guard.knowledge.new_fact("alice/1", "seen", ["k"], "observed"),
                await guard.knowledge.new_fact("alice/1", "seen", ["j"], "observed"),
                await guard.knowledge.new_fact("bob/1", "seen", ["k"], "observed"),
            ]
        )
        assert (await guard.decide(seen("k", "alice/1"))).kind == "allow"
        assert {"alice/1", "bob/1"} <= set(await view.sessions())
        assert await view.count("alice/1") == 2
        held = [f for f in await view.valid("alice/1") if not f.internal]
        assert sorted(f.predicate for f in held) == ["seen", "seen"]
        k = next(f.fact for f in held if "k" in f.fact)
        # patterns and near spellings revoke nothing, in the store or in the engine
        for pattern in ("seen(_)", "_", "X", k + " ", k.replace("k", "K"), "seen(X)"):
            assert await view.revoke("alice/1", pattern) is False, pattern
        assert await view.count("alice/1") == 2
        assert (await guard.decide(seen("j", "alice/1"))).kind == "allow"
        assert await view.revoke("alice/1", k) is True
        assert (await guard.decide(seen("k", "alice/1"))).kind == "deny"
        assert (await guard.decide(seen("j", "alice/1"))).kind == "allow"  # the other fact stays
        assert (await guard.decide(seen("k", "bob/1"))).kind == "allow"  # another session's is untouched
        assert await view.revoke("alice/1", k) is False  # gone already
        assert await view.contexts("alice/1") == {}
    finally:
        await guard.close()


async def test_a_recorded_proof_is_withheld_when_it_may_rest_on_withheld_reads(tmp_path: Path) -> None:
    """A record outlives its facts: with none left in the session, a proof naming a predicate a withheld
    tool's binding yields, or recording a fetch from one, is still withheld; one resting on neither is
    whole."""
    rb = tmp_path / "seen.pl"
    rb.write_text(
        RULES + "binding(status(B, S), tool('bk__get_booking', [id = B]), extract([S = '/s']), [ttl(60)]).\n"
    )
    guard = PolicyGuard([rb], None, store_path=tmp_path / "facts.db")
    await guard.start(watch=False)
    try:
        guard.withheld = lambda tool, who: "bookings" if tool == "bk__get_booking" else None
        bob, owner_at_cli = guard.session_facts("bob"), guard.session_facts()
        on_status = {"rulebase": "v1", "tree": {"fact": "status('BK-1',confirmed)"}, "fetches": []}
        fetched = {"rulebase": "v1", "tree": {"fact": "seen(k)"},
                   "fetches": [{"tool": "bk__get_booking", "arguments": {"id": "BK-1"}, "ok": True}]}
        plain = {"rulebase": "v1", "tree": {"fact": "seen(k)"}, "passes": 1, "fetches": []}
        for proof in (on_status, fetched):
            shown = await bob.shown_proof("bob/1", proof)
            assert set(shown) == {"rulebase", "withheld"}, shown
            assert await owner_at_cli.shown_proof("bob/1", proof) == proof
        assert await bob.shown_proof("bob/1", plain) == plain
        # an ask's record (what the call told its caller) stays beside the note
        asked = {"questions": ["q1"], "unmet": ["status('BK-1',S)"]}
        assert (await bob.shown_proof("bob/1", asked))["questions"] == ["q1"]
    finally:
        await guard.close()
