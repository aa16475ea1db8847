"""On both backends, what one principal stores never moves the order or the scores of another's memory
search: SQLite ranks by bm25 over the namespace's own FTS table; PostgreSQL's ``ts_rank_cd`` reads no
corpus statistics (only the row and the query), so its one shared table leaks nothing through ranking."""

from __future__ import annotations

import random
import time

import pytest

from sentinel_mcp.search.embedding import HashingEmbedder
from sentinel_mcp.search.search_service import SearchService
from sentinel_mcp.search.settings import SearchSettings

pytestmark = pytest.mark.timeout(120)

BOB = ["zebra walk", "yacht walk", "zebra yacht harbour at dawn with a long walk along the pier",
       "harbour fees for a yacht", "the zebra crossing near the harbour"]
QUERIES = ["zebra yacht", "harbour walk", "yacht fees harbour", "long pier walk zebra"]
WORDS = "zebra yacht harbour walk dawn fees pier long crossing".split()


async def _bob_view(s: SearchService) -> list[object]:
    idx = await s._idx()
    out: list[object] = []
    for q in QUERIES:
        out.append(await idx.words_ranked(s._namespace("bob"), q))
        out.append([(m["text"], m["score"], m["found_by"]) for m in await s.memory_search("bob", q, k=5)])
    return out


async def test_alices_memories_never_move_bobs_ranking(store_location: str) -> None:
    rng = random.Random(5)
    s = await SearchService(store_location, SearchSettings(), embedder=HashingEmbedder(256)).open()
    try:
        now = time.time()
        for text in BOB:
            await s.memory_store("bob", text, now=now)
        before = await _bob_view(s)
        assert before[0]  # bob's words are found
        for size in (1, 8, 30):
            for _ in range(size):
                await s.memory_store("alice", " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 50))),
                                     now=now)
            assert await _bob_view(s) == before, size
    finally:
        await s.close()
