"""The cluster's memory of asked questions (gateway/shared_asked_questions.py) on a real PostgreSQL: a
question is its principal's and conversation's only; a row made up or altered in SQL by someone without the
seal key (another principal's, another conversation's, other choices, another time, another key) is absent,
never a question asked; one principal's many questions push out its own oldest only."""

from __future__ import annotations

import pytest

from sentinel_mcp.core.decision import Question
from sentinel_mcp.gateway.shared_asked_questions import SCHEMA, SharedAskedQuestions
from sentinel_mcp.storage import open_database
from sentinel_mcp.storage.open import release


SCHEMA_OF_ANSWER = {"type": "object", "properties": {"answer": {"enum": ["red", "green"]}}}


def q(key: str, kind: str = "ask") -> Question:
    return Question(key=f"policy.ask.{key}", message="Which colour?",
                    meta={"kind": kind, "predicate": "colour"}, requested_schema=SCHEMA_OF_ANSWER)


@pytest.mark.parametrize("tamper", [
    "UPDATE asked_questions SET principal = 'bob'",
    "UPDATE asked_questions SET session = 'alice/s2'",
    "UPDATE asked_questions SET question = replace(question, 'green', 'blue')",
    "UPDATE asked_questions SET asked_at = asked_at + 1",
    "UPDATE asked_questions SET qkey = 'policy.ask.other'",
    "UPDATE asked_questions SET mac = ''",
])
async def test_an_asked_question_is_its_conversations_and_a_forged_row_is_none(pg_url: str,
                                                                              tamper: str) -> None:
    db = open_database(pg_url, "nonces")
    try:
        book = await SharedAskedQuestions.open(db, 300, 3, key=b"k" * 32)
        other = SharedAskedQuestions(db, 300, 3, key=b"k" * 32)  # another replica
        await book.remember("alice", "alice/s1", [("policy.ask.c", q("c"))])
        got = await other.get("alice", "alice/s1", "policy.ask.c")
        assert got == q("c")
        assert await other.get("bob", "alice/s1", "policy.ask.c") is None
        assert await other.get("alice", "alice/s2", "policy.ask.c") is None
        misconfigured = SharedAskedQuestions(db, 300, 3, key=b"x" * 32)  # another key
        assert await misconfigured.get("alice", "alice/s1", "policy.ask.c") is None
        await db.write(tamper)
        for principal, session, key in (("alice", "alice/s1", "policy.ask.c"),
                                        ("bob", "alice/s1", "policy.ask.c"),
                                        ("alice", "alice/s2", "policy.ask.c"),
                                        ("alice", "alice/s1", "policy.ask.other")):
            assert await other.get(principal, session, key) is None, (tamper, principal, session, key)
    finally:
        await release(db)


async def test_a_principals_questions_push_out_its_own_oldest_only(pg_url: str) -> None:
    db = open_database(pg_url, "nonces")
    try:
        await db.migrate(SCHEMA)
        book = SharedAskedQuestions(db, 300, 3, key=b"k" * 32)
        await book.remember("alice", "alice/s", [("policy.ask.mine", q("mine"))])
        for i in range(10):
            await book.remember("mallory", f"mallory/s{i}", [(f"policy.ask.k{i}", q(f"k{i}"))])
        assert await book.get("alice", "alice/s", "policy.ask.mine") is not None
        assert await book.get("mallory", "mallory/s0", "policy.ask.k0") is None
        assert await book.get("mallory", "mallory/s9", "policy.ask.k9") is not None
        rows = await db.query("SELECT principal, count(*) FROM asked_questions GROUP BY principal ORDER BY 1")
        assert rows == [("alice", 1), ("mallory", 3)]
        await book.forget("mallory", "mallory/s9", "policy.ask.k9")
        assert await book.get("mallory", "mallory/s9", "policy.ask.k9") is None
    finally:
        await release(db)
