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
