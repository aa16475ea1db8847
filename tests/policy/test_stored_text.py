"""Text SQLite cannot hold (a lone UTF-16 surrogate, which JSON and Python allow) in a session id, an argument
or a fact: the fact store keeps it exactly, never raises, never merges two strings into one, and the guard's
decisions stay what they are for plain text."""

from __future__ import annotations

import hashlib

import json
import random
import time
from pathlib import Path

import pytest

from sentinel_mcp.core.decision import ToolCall
from sentinel_mcp.policy.fact_store import Fact, FactStore
from sentinel_mcp.policy.guard import PolicyGuard
from sentinel_mcp.policy.prolog_text import module_name
from sentinel_mcp.core.stored_text import restored, stored

pytestmark = pytest.mark.timeout(60)

ESC, STAND_IN = "\U0010f7ff", "\U0010f800"
ODD = [
    "lone \ud800",
    "\udfff",
    "pair \ud83d\ude00 reversed \ude00\ud83d",
    f"escape {ESC}",
    f"stand-in {STAND_IN}",
    f"{ESC}{STAND_IN}",
    f"{ESC}\ud800",
    f"{ESC}{ESC}",
    "plain",
    "",
    "é 中文 😀",
    "nul\x00",
    "a" * 2000 + "\ud800",
]


def odd_texts(n: int = 300) -> list[str]:
    rng = random.Random(18)
    alphabet = [
        "a",
        "'",
        "\\",
        "\ud800",
        "\udbff",
        "\udc00",
        "\udfff",
        ESC,
        STAND_IN,
        "\U0010ffff",
        "é",
        "\x00",
    ]
    return ODD + ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8))) for _ in range(n)]


def test_stored_text_is_valid_utf8_and_reads_back_exactly_and_distinctly() -> None:
    texts = odd_texts()
    seen: dict[str, str] = {}
    for t in texts:
        s = stored(t)
        s.encode("utf-8")  # what SQLite needs: raises on a surrogate
        assert restored(s) == t, repr(t)
        assert seen.setdefault(s, t) == t, (repr(t), repr(seen[s]))  # two strings never share a stored form
    assert stored("plain text") == "plain text"


def test_module_names_of_odd_session_ids_are_distinct() -> None:
    names = {module_name("s", t) for t in set(odd_texts())}
    assert len(names) == len(set(odd_texts()))


def test_a_module_name_holds_the_whole_digest_of_its_session() -> None:
    """A session's facts live in the module its id names: two ids of one module share their facts. Cut to 64
    bits, a client naming its conversations by label found two labels of one module in 2^32 hashes."""
    sid = "alice/label-main-0a1b2c3d"
    assert module_name("s", sid) == "s_" + hashlib.sha256(sid.encode()).hexdigest()


async def test_fact_store_keeps_odd_sessions_and_arguments(tmp_path: Path) -> None:
    async with FactStore(tmp_path / "facts.db") as store:
        # as a client's JSON brings them (a surrogate *pair* in JSON is the character it encodes)
        texts = [t for t in dict.fromkeys(odd_texts(60)) if json.loads(json.dumps(t)) == t]
        now = time.time()
        for i, t in enumerate(texts):
            await store.add(
                [
                    Fact(
                        session=t,
                        predicate=f"p{i % 3}",
                        args=[t, i],
                        fact=f"fact {i} {t}",
                        provenance="observed",
                        source_tool=t,
                        source_digest=t,
                        contexts=[t],
                        expires_at=now + 60,
                    )
                ]
            )
            await store.bind_context(t, t or "c", {"v": t})
        for i, t in enumerate(texts):
            facts = await store.valid(t)
            assert [(f.session, f.predicate, f.args, f.fact, f.source_tool) for f in facts] == [
                (t, f"p{i % 3}", [t, i], f"fact {i} {t}", t)
            ], repr(t)
            assert await store.valid(t, predicate=f"p{i % 3}") == facts
            assert await store.count(t) == 1
            assert await store.contexts(t) == {t or "c": {"v": t}}
            if t:
                assert await store.known_values(t, [t, t + "x"]) == {t}
        assert set(await store.sessions()) == set(texts)
        # a session that only resembles another one (the same text once escaped) sees none of its facts
        assert await store.valid(stored("lone \ud800")) == []
        for t in texts:
            assert await store.delete_depending_on(t, t) == [f"fact {texts.index(t)} {t}"]
            assert await store.count(t) == 0


async def test_guard_decides_for_odd_sessions_as_for_plain_ones(tmp_path: Path) -> None:
    rb = tmp_path / "odd.pl"
    rb.write_text(
        "fact(seen/1).\nguard('t__seen', [text = T], seen(T)).\nguard('t__any', [text = T], atom(T)).\n"
    )
    guard = PolicyGuard([rb], None, store_path=tmp_path / "facts.db")
    await guard.start(watch=False)
    try:
        for t in ODD:
            for session in (t, "plain session"):
                seen = ToolCall(
                    name="t__seen", server="t", tool="seen", arguments={"text": t}, session_id=session
                )
                any_ = ToolCall(
                    name="t__any", server="t", tool="any", arguments={"text": t}, session_id=session
                )
                assert (await guard.decide(any_)).kind == "allow", (repr(t), repr(session))
                assert (await guard.decide(seen)).kind == "deny", (repr(t), repr(session))
                fact = await guard.knowledge.new_fact(session, "seen", [t], "observed")
                await guard.knowledge.add([fact])
                d = await guard.decide(seen)
                assert d.kind == "allow", (repr(t), repr(session), d)
                await guard.knowledge.invalidate(session, fact.fact)
                assert (await guard.decide(seen)).kind == "deny", (repr(t), repr(session))
        # the store has every session apart (a fresh guard loads them from disk: same decisions)
        await guard.knowledge.add([await guard.knowledge.new_fact("x\ud800", "seen", ["k"], "observed")])
    finally:
        await guard.close()
    guard = PolicyGuard([rb], None, store_path=tmp_path / "facts.db")
    await guard.start(watch=False)
    try:
        for session, kind in (
            ("x\ud800", "allow"),
            ("x\ud801", "deny"),
            (f"x{STAND_IN}", "deny"),
            (stored("x\ud800"), "deny"),
        ):
            c = ToolCall(name="t__seen", server="t", tool="seen", arguments={"text": "k"}, session_id=session)
            assert (await guard.decide(c)).kind == kind, repr(session)
    finally:
        await guard.close()
