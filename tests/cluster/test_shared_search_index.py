"""The policy and memory index on both backends (SQLite FTS5, PostgreSQL ``tsvector``); on PostgreSQL shared
by
replicas: a memory stored through one replica is found through the other (its cached vectors follow), for its
principal only, and two replicas indexing one document at once leave it indexed once."""

from __future__ import annotations

import asyncio
import time

import pytest

from sentinel_mcp.search.embedding import HashingEmbedder
from sentinel_mcp.search.paragraphs import Paragraph
from sentinel_mcp.search.search_service import SearchService
from sentinel_mcp.search.settings import SearchSettings
from sentinel_mcp.search.shared_index import PassageTextRefused

DOC = "# Baggage\nGold members get three free checked bags.\n\n# Refunds\nRefunds take ten days to reach the card.\n"  # noqa: E501 (verbatim text)
PARAS = [
    Paragraph("airline", ("Baggage",), "Gold members get three free checked bags.", 2, 2),
    Paragraph("airline", ("Refunds",), "Refunds take ten days to reach the card.", 5, 5),
]


def service(location: str) -> SearchService:
    return SearchService(location, SearchSettings(), embedder=HashingEmbedder(256))


async def test_policy_and_memories_on_either_backend(store_location: str) -> None:
    s = await service(store_location).open()
    assert await s.index_documents({"airline": PARAS}, {"airline": DOC}) == ["airline"]
    assert await s.index_documents({"airline": PARAS}, {"airline": DOC}) == []  # unchanged: not indexed again
    hits = await s.policy_search("how many checked bags for gold members", k=1)
    assert hits[0]["heading"] == "Baggage" and hits[0]["lines"] == [2, 2] and "words" in hits[0]["found_by"]
    now = time.time()
    await s.memory_store("alice", "Mia prefers aisle seats on long flights", ["travel"], now=now)
    await s.memory_store("alice", "card 4111 1111 1111 1111 for the hotel", now=now)
    assert (await s.memory_search("alice", "aisle seat", 1))[0]["text"].startswith("Mia prefers aisle")
    assert "4111 1111 1111 1111" not in str(await s.memory_recent("alice", 5))  # redacted before stored
    for other in ("bob", "ALICE", "alice ", "memory:alice", "%"):  # another principal: nothing
        assert await s.memory_search(other, "aisle seat", 5) == []
        assert await s.memory_recent(other, 5) == []
    await s.close()


async def test_a_memory_stored_through_one_replica_is_found_through_the_other(pg_url: str) -> None:
    a, b = await service(pg_url).open(), await service(pg_url).open()
    assert await b.memory_search("alice", "window seat", 5) == []  # b has cached the (empty) namespace
    await a.memory_store("alice", "Omar wants a window seat", now=time.time())
    found = await b.memory_search("alice", "window seat", 5)
    assert [h["text"] for h in found] == ["Omar wants a window seat"] and "vector" in found[0]["found_by"]
    for _ in range(3):  # b's vectors follow a's later writes too
        await a.memory_store("alice", "Omar likes a window seat near the front", now=time.time())
    assert len(await b.memory_recent("alice", 10)) == 4
    assert len(await b.memory_search("alice", "window seat front", 10)) == 4
    with pytest.raises(PassageTextRefused, match="NUL"):  # text the server cannot hold: a clear refusal
        await a.memory_store("alice", "before\x00after", now=time.time())
    await a.close()
    await b.close()


async def test_two_replicas_indexing_one_document_at_once_index_it_once(pg_url: str) -> None:
    a, b = await service(pg_url).open(), await service(pg_url).open()
    for round_ in range(4):  # bounded by count; a new text each round
        text = DOC + f"\n{round_}"
        await asyncio.gather(
            a.index_documents({"airline": PARAS}, {"airline": text}),
            b.index_documents({"airline": PARAS}, {"airline": text}),
        )
        rows = await a.index.db.query(  # type: ignore[union-attr]
            "SELECT count(*) FROM passages WHERE namespace = 'policy' AND source = 'airline'"
        )
        assert rows[0][0] == len(PARAS)
    await a.close()
    await b.close()
