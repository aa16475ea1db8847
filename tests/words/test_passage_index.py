"""The passage index's storage and ranking: an index of version 1 (vectors inside ``passages``) is migrated
keeping every passage, or left exactly as it was when the migration fails; deleting a passage deletes its
vector; the sparse product a hashing query uses ranks exactly as the full product would."""

from __future__ import annotations

import json
import random
import sqlite3
import time
from pathlib import Path

import numpy as np
import pytest

from sentinel_mcp.search.embedding import HashingEmbedder
from sentinel_mcp.search.passage_index import CANDIDATES, NewPassage, PassageIndex
from sentinel_mcp.storage.database import StatementError

pytestmark = pytest.mark.timeout(60)

# The schema as version 1 wrote it (an index on a user's disk has this shape).
V1_SCHEMA = """
CREATE TABLE index_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE passages (
    id INTEGER PRIMARY KEY, namespace TEXT NOT NULL, source TEXT NOT NULL, heading TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL, line_start INTEGER, line_end INTEGER, tags TEXT NOT NULL DEFAULT '[]',
    created_at REAL NOT NULL, expires_at REAL, embedder TEXT NOT NULL, vector BLOB NOT NULL);
CREATE INDEX passages_by_namespace ON passages (namespace, created_at);
CREATE INDEX passages_by_expiry ON passages (expires_at);
CREATE VIRTUAL TABLE passages_fts USING fts5(
    heading, text, content='passages', content_rowid='id', tokenize='porter unicode61');
CREATE TRIGGER passages_ai AFTER INSERT ON passages BEGIN
    INSERT INTO passages_fts (rowid, heading, text) VALUES (new.id, new.heading, new.text);
END;
CREATE TRIGGER passages_ad AFTER DELETE ON passages BEGIN
    INSERT INTO passages_fts (passages_fts, rowid, heading, text) VALUES ('delete', old.id, old.heading, old.text);
END;
CREATE TABLE sources (namespace TEXT NOT NULL, source TEXT NOT NULL, digest TEXT NOT NULL,
                      PRIMARY KEY (namespace, source));
INSERT INTO index_meta VALUES ('schema_version', '1');
"""  # noqa: E501 (verbatim text)

MEMORIES = [
    "Mia prefers aisle seats on long flights",
    "Mia's trip to Seattle is for a conference in May",
    "Omar travels with a cat in the cabin",
]


def _v1_index(path: Path, emb: HashingEmbedder, extra_sql: str = "") -> None:
    db = sqlite3.connect(path)
    db.executescript(V1_SCHEMA + extra_sql)
    now = time.time()
    rows = [
        (
            "memory:alice",
            "memory",
            "",
            t,
            None,
            None,
            json.dumps(["t"]),
            now - 10 + i,
            None,
            emb.name,
            emb.embed([t])[0].tobytes(),
        )
        for i, t in enumerate(MEMORIES)
    ]
    rows.append(
        (
            "policy",
            "airline",
            "Baggage",
            "Gold members get three free checked bags",
            10,
            12,
            "[]",
            now,
            None,
            emb.name,
            emb.embed(["Baggage\nGold members get three free checked bags"])[0].tobytes(),
        )
    )
    db.executemany(
        "INSERT INTO passages (namespace, source, heading, text, line_start, line_end, tags, "
        "created_at, expires_at, embedder, vector) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        rows,
    )
    db.execute("INSERT INTO sources VALUES ('policy', 'airline', 'd1')")
    db.commit()
    db.close()


async def test_a_version_1_index_is_migrated_keeping_every_passage(tmp_path: Path) -> None:
    emb = HashingEmbedder(256)
    _v1_index(tmp_path / "p.db", emb)
    for opened in range(2):  # the second open finds version 2 and changes nothing
        idx = await PassageIndex(tmp_path / "p.db", emb).open()
        try:
            assert await idx.count("memory:alice") == 3 + opened and await idx.count("policy") == 1
            assert [h.text for h in await idx.recent("memory:alice", 5)][opened:] == MEMORIES[::-1]
            hits = await idx.search("memory:alice", "which seat does Mia like on a flight", 1)
            assert hits[0].text == MEMORIES[0] and set(hits[0].by) == {"words", "vector"}
            hit = (await idx.search("policy", "free checked bags for gold", 1))[0]
            assert (hit.heading, hit.line_start, hit.line_end) == ("Baggage", 10, 12)
            await idx.add("memory:alice", NewPassage(text="Mia is allergic to peanuts", source="memory"))
            assert (await idx.search("memory:alice", "peanuts allergy", 1))[
                0
            ].text == "Mia is allergic to peanuts"
        finally:
            await idx.close()
    db = sqlite3.connect(tmp_path / "p.db")
    cols = {r[1] for r in db.execute("PRAGMA table_info(passages)")}
    assert "vector" not in cols and "embedder" not in cols
    assert db.execute("SELECT value FROM index_meta WHERE key = 'schema_version'").fetchone() == ("3",)
    assert not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'passages_fts'").fetchall()
    assert db.execute("SELECT COUNT(*) FROM passages").fetchone() == (
        6,
    )  # 4 migrated, 2 added (one per open)
    assert db.execute("SELECT COUNT(*) FROM passage_vectors v JOIN passages p ON p.id = v.id").fetchone() == (
        6,
    )
    assert db.execute("SELECT digest FROM sources").fetchone() == ("d1",)
    db.close()


async def test_a_failed_migration_leaves_version_1_as_it_was(tmp_path: Path) -> None:
    emb = HashingEmbedder(256)
    # a table in the way: the migration's copy of the vectors fails after it has renamed and dropped things
    _v1_index(tmp_path / "p.db", emb, "CREATE TABLE passage_vectors (unrelated TEXT);")
    before = sqlite3.connect(tmp_path / "p.db").execute("SELECT * FROM passages ORDER BY id").fetchall()
    with pytest.raises(StatementError) as got:  # SQLite's own error, carried
        await PassageIndex(tmp_path / "p.db", emb).open()
    assert isinstance(got.value.__cause__, sqlite3.OperationalError)
    db = sqlite3.connect(tmp_path / "p.db")
    assert db.execute("SELECT * FROM passages ORDER BY id").fetchall() == before
    assert db.execute("SELECT rowid FROM passages_fts WHERE passages_fts MATCH 'aisle'").fetchall() == [(1,)]
    assert not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'passages_v1'").fetchall()
    assert db.execute("SELECT value FROM index_meta WHERE key = 'schema_version'").fetchone() == ("1",)
    db.close()


async def test_deleting_a_passage_deletes_its_vector(tmp_path: Path) -> None:
    idx = await PassageIndex(tmp_path / "p.db", HashingEmbedder(128)).open()
    try:
        now = time.time()
        await idx.replace_source(
            "policy", "doc", [NewPassage(text=f"rule {i}", source="doc") for i in range(5)], "a"
        )
        await idx.replace_source(
            "policy", "doc", [NewPassage(text=f"rule {i}", source="doc") for i in range(3)], "b"
        )
        for i in range(6):
            await idx.add(
                "memory:bob",
                NewPassage(text=f"note {i}", source="memory", expires_at=now + 100 * (i % 2)),
                keep=4,
            )
        await idx.purge(now + 50)
        n_passages = (await idx.db.query("SELECT COUNT(*) FROM passages"))[0][0]
        n_vectors = (await idx.db.query("SELECT COUNT(*) FROM passage_vectors"))[0][0]
        assert n_passages == 3 + 2 and n_vectors == n_passages  # 4 kept, 2 of them expired
        assert [h.text for h in await idx.recent("memory:bob", 9)] == ["note 5", "note 3"]
    finally:
        await idx.close()


async def test_the_sparse_product_ranks_as_the_full_product(tmp_path: Path) -> None:
    emb = HashingEmbedder(1024)
    rng = random.Random(3)
    vocab = "bag fee gold silver member cabin economy basic refund cancel change flight seat pet insurance".split()  # noqa: E501 (verbatim text)
    texts = [" ".join(rng.choice(vocab) for _ in range(rng.randint(3, 12))) for _ in range(400)]
    idx = await PassageIndex(tmp_path / "p.db", emb).open()
    try:
        await idx.replace_source("ns", "doc", [NewPassage(text=t, source="doc") for t in texts], "d")
        ids, mat_t = await idx._matrix("ns", time.time())
        long_query = " ".join(f"w{i}" for i in range(150))  # many dimensions: the full product is used
        assert np.count_nonzero(emb.embed([long_query])[0]) * 4 >= emb.dim and len(long_query) < 2000
        for q in [
            "gold bag fee",
            "cancel refund",
            "pet in cabin",
            "nothing matches zzz",
            long_query + " seat",
        ]:
            dense = emb.embed([q])[0] @ mat_t
            got = await idx.vector_ranked("ns", q)
            by_id = dict(zip(ids.tolist(), dense.tolist()))
            sims = [by_id[i] for i in got]
            want = sorted((s for s in dense.tolist() if s > 1e-6), reverse=True)[:CANDIDATES]
            assert sims == pytest.approx(want, abs=1e-6), q  # the same best scores, best first
    finally:
        await idx.close()
