"""Ranking sees only the caller's namespace: bm25's statistics (a word's rarity, the mean length) are the
namespace's own, so what another principal stores never moves the order or the scores of one's own results
(over one shared FTS table it did: a probe of others' memories word by word). Each namespace's words table is
named by an integer id, never by its text; deletions leave its table; a version 2 index is migrated."""

from __future__ import annotations

import asyncio
import random
import re
import sqlite3
import time
from pathlib import Path

import pytest

from sentinel_mcp.search.embedding import HashingEmbedder
from sentinel_mcp.search.passage_index import NewPassage, PassageIndex
from sentinel_mcp.search.search_service import SearchService

pytestmark = pytest.mark.timeout(120)

BOB = ["zebra walk", "yacht walk", "zebra yacht harbour at dawn with a long walk along the pier",
       "harbour fees for a yacht", "the zebra crossing near the harbour", "dawn swim"]
QUERIES = ["zebra yacht", "harbour walk", "dawn zebra", "yacht fees harbour", "long pier walk zebra"]
WORDS = "zebra yacht harbour walk dawn fees pier long swim crossing".split()


async def _bob_view(svc: SearchService) -> list[object]:
    idx = await svc._idx()
    ns = svc._namespace("bob")
    out: list[object] = []
    for q in QUERIES:
        out.append(await idx.words_ranked(ns, q))
        out.append([(m["text"], m["score"], m["found_by"]) for m in await svc.memory_search("bob", q, k=6)])
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_what_alice_stores_never_moves_bobs_ranking(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    svc = SearchService(tmp_path / "p.db", embedder=HashingEmbedder(256))
    try:
        now = time.time()
        for text in BOB:
            await svc.memory_store("bob", text, now=now)
        before = await _bob_view(svc)
        assert before[0][:2] and any(before[i] for i in range(0, len(before), 2))  # words found bob's notes
        # many words, many sizes: one, a few, dozens; short and long (the mean length moves too)
        for size in (1, 5, 40):
            for _ in range(size):
                words = [rng.choice(WORDS) for _ in range(rng.randint(1, 60))]
                await svc.memory_store("alice", " ".join(words), now=now)
            await svc.memory_store(f"carol{size}", "zebra " * size, now=now)
            assert await _bob_view(svc) == before, size
    finally:
        await svc.close()


async def test_the_reproducer_order_stays(tmp_path: Path) -> None:
    svc = SearchService(tmp_path / "p.db", embedder=HashingEmbedder(256))
    try:
        now = time.time()
        await svc.memory_store("bob", "zebra walk", now=now)
        await svc.memory_store("bob", "yacht walk", now=now)
        idx = await svc._idx()
        before = await idx.words_ranked(svc._namespace("bob"), "zebra yacht")
        for i in range(5):
            await svc.memory_store("alice", f"zebra sighting number {i}", now=now)
        assert await idx.words_ranked(svc._namespace("bob"), "zebra yacht") == before
    finally:
        await svc.close()


def _tables(path: Path) -> set[str]:
    db = sqlite3.connect(path)
    try:
        return {n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        db.close()


HOSTILE = ["memory:'); DROP TABLE passages; --", 'memory:"x" ] [', "memory:\x00nul", "memory:passages_fts_1",
           "memory:Ωmega ☃ \u202e", "memory:" + "a" * 500, "policy\n; ATTACH 'x' AS y", "`", ""]


async def test_hostile_namespace_names_never_become_identifiers(tmp_path: Path) -> None:
    idx = await PassageIndex(tmp_path / "p.db", HashingEmbedder(128)).open()
    try:
        for i, ns in enumerate(HOSTILE):
            await idx.add(ns, NewPassage(text=f"secret{i} shared words", source="memory"))
        for i, ns in enumerate(HOSTILE):
            hits = await idx.words_ranked(ns, f"secret{i} secret{(i + 1) % len(HOSTILE)} shared")
            got = [h.text for h in await idx._fetch(hits)]
            assert got == [f"secret{i} shared words"], ns  # its own passage only
        names = await idx.db.query("SELECT namespace FROM fts_namespaces ORDER BY id")
        assert [n for (n,) in names] == HOSTILE  # stored as values, exactly
    finally:
        await idx.close()
    fts = {t for t in _tables(tmp_path / "p.db") if t.startswith("passages_fts")}
    assert all(re.fullmatch(r"passages_fts_[0-9]+(_(data|idx|docsize|config))?", t) for t in fts), fts
    assert {"passages", "passage_vectors", "sources", "fts_namespaces"} <= _tables(tmp_path / "p.db")


async def _table_ids(idx: PassageIndex, namespace: str, word: str) -> list[int]:
    table = await idx._fts_found(namespace)
    assert table is not None
    rows = await idx.db.query(f"SELECT rowid FROM {table} WHERE {table} MATCH ? ORDER BY rowid", (word,))
    return [r for (r,) in rows]


async def test_deleted_passages_leave_their_namespaces_table(tmp_path: Path) -> None:
    idx = await PassageIndex(tmp_path / "p.db", HashingEmbedder(128)).open()
    try:
        now = time.time()
        await idx.replace_source("policy", "doc", [NewPassage(text=f"rule {i} gold", source="doc")
                                                   for i in range(5)], "a")
        await idx.replace_source("policy", "doc", [NewPassage(text=f"rule {i} gold", source="doc")
                                                   for i in range(2)], "b")
        for i in range(6):
            await idx.add("memory:bob", NewPassage(text=f"note {i} gold", source="memory",
                                                   expires_at=now + 100 * (i % 2)), keep=4)
            await idx.add("memory:eve", NewPassage(text=f"eve {i} gold", source="memory",
                                                   expires_at=now + 10))
        await idx.purge(now + 50)
        for ns in ("policy", "memory:bob", "memory:eve"):
            live = sorted(h.id for h in await idx.recent(ns, 99))
            assert await _table_ids(idx, ns, "gold") == live, ns  # the table holds exactly the live rows
            table = await idx._fts_found(ns)
            await idx.db.write(f"INSERT INTO {table} ({table}) VALUES ('integrity-check')")
        assert [h.text for h in await idx.recent("memory:bob", 9)] == ["note 5 gold", "note 3 gold"]
        assert await idx.recent("memory:eve", 9) == []
    finally:
        await idx.close()


async def test_a_version_2_index_gets_a_table_per_namespace(tmp_path: Path) -> None:
    from sentinel_mcp.search import index_sql
    from sentinel_mcp.storage.sql_script import split_statements

    emb = HashingEmbedder(128)
    db = sqlite3.connect(tmp_path / "p.db")
    for s in split_statements(index_sql.SCHEMA):
        db.execute(s)
    db.execute("CREATE TABLE storage_schema (store TEXT PRIMARY KEY, version INTEGER NOT NULL)")
    db.execute("INSERT INTO storage_schema VALUES ('passages', 1)")
    texts = {"memory:bob": ["zebra walk", "yacht walk"], "memory:alice": [f"zebra {i}" for i in range(5)]}
    for ns, ts in texts.items():
        for t in ts:
            v = emb.embed([t])[0].tobytes()
            db.execute(index_sql.INSERT, (ns, "memory", "", t, None, None, "[]", 1.0, None, emb.name, v))
    db.commit()
    db.close()
    idx = await PassageIndex(tmp_path / "p.db", emb).open()
    try:
        bob = await idx.words_ranked("memory:bob", "zebra yacht")
        assert sorted(bob) == [1, 2] and len(await idx.words_ranked("memory:alice", "zebra")) == 5
        fresh = await PassageIndex(tmp_path / "q.db", emb).open()
        try:
            for t in texts["memory:bob"]:
                await fresh.add("memory:bob", NewPassage(text=t, source="memory"))
            assert bob == await fresh.words_ranked("memory:bob", "zebra yacht")  # alice's words gone from it
        finally:
            await fresh.close()
        await idx.add("memory:bob", NewPassage(text="zebra again", source="memory"))
        assert len(await idx.words_ranked("memory:bob", "zebra")) == 2
    finally:
        await idx.close()
    assert "passages_fts" not in _tables(tmp_path / "p.db")


async def test_a_namespace_id_without_its_table_reads_nothing_then_is_made(tmp_path: Path) -> None:
    # a writer stopped between giving the id and making the table: searches find nothing; an add makes it
    idx = await PassageIndex(tmp_path / "p.db", HashingEmbedder(128)).open()
    try:
        await idx.db.write("INSERT INTO fts_namespaces (namespace) VALUES ('memory:half')")
        assert await idx.words_ranked("memory:half", "zebra") == []
        await idx.add("memory:half", NewPassage(text="zebra", source="memory"))
        assert len(await idx.words_ranked("memory:half", "zebra")) == 1
        assert await idx.words_ranked("memory:never", "zebra") == []
    finally:
        await idx.close()


async def test_two_indexes_on_one_file_keep_every_table_in_step(tmp_path: Path) -> None:
    # two gateways on one data dir: their writes interleave; each namespace's table holds its live rows only
    a = await PassageIndex(tmp_path / "p.db", HashingEmbedder(128)).open()
    b = await PassageIndex(tmp_path / "p.db", HashingEmbedder(128)).open()
    try:
        names = [f"memory:p{i}" for i in range(4)]

        async def writes(idx: PassageIndex, me: int) -> None:
            for i in range(12):
                ns = names[(i + me) % len(names)]
                await idx.add(ns, NewPassage(text=f"gold w{me} n{i}", source="memory"), keep=5)

        await asyncio.gather(writes(a, 0), writes(b, 1), a.replace_source(
            "policy", "doc", [NewPassage(text=f"gold rule {i}", source="doc") for i in range(7)], "x"))
        for ns in [*names, "policy"]:
            live = sorted(h.id for h in await a.recent(ns, 99))
            assert live and await _table_ids(a, ns, "gold") == live, ns
            assert await _table_ids(b, ns, "gold") == live, ns
    finally:
        await a.close()
        await b.close()
