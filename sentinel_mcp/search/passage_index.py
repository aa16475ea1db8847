"""The passage index: words (SQLite FTS5, bm25) and vectors (cosine), fused by reciprocal rank.

Both rank within one namespace from that namespace's passages alone: the words of each namespace are in a
table of their own (``index_sql``: bm25's statistics are its table's, so what one principal stores never
moves the order of another's results), the vectors in its own matrix.

Both lists rank the live passages of one namespace; a passage's fused score is the sum of 1 / (60 + rank)
over the lists it is in (reciprocal rank fusion), so a passage found by both beats one found by either.

A search stays fast as the index grows (``benchmarks/policy_search.py``, 10,000 chunks): the live vectors of a
namespace are held in memory as one matrix, transposed (one row per dimension) and rebuilt after a write to
the namespace; a hashing-trick query vector has a few non-zero dimensions, so the product reads only their
rows (the same sums as the full product), the candidates are taken with a partial sort, and the query is
embedded inline (no thread hop). The words list is bm25 inside SQLite with a LIMIT. Dropping a question's
common words before the FTS query would halve its cost but changes which passages bm25 ranks first (recall@3
at 10,000 chunks fell from 31% to 19%), so every word is kept.

Behind the storage seam (``SeamStore``): the schema is migrated there (a version 1 index, or one kept before
the seam, in the seam's first migration, in one transaction), every change is one transaction committed
before it returns, and a fault refuses. Shared (rollback journal): every gateway on a data dir searches and
stores memories in the same file. ``shared_index.py`` is the same index in a server database.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from sentinel_mcp.core import process_clock
from sentinel_mcp.search import index_sql as sql
from sentinel_mcp.search.embedding import STOP_WORDS, Embedder
from sentinel_mcp.storage import Schema, Statement
from sentinel_mcp.storage.sql_script import split_statements
from sentinel_mcp.storage.store import SeamStore

RRF_K = 60
CANDIDATES = 50  # from each list
MAX_QUERY_CHARS = 2000
MAX_TERMS = 64


@dataclass
class NewPassage:
    text: str
    source: str
    heading: str = ""
    line_start: int | None = None
    line_end: int | None = None
    tags: list[str] = field(default_factory=list)
    expires_at: float | None = None


@dataclass
class Hit:
    id: int
    source: str
    heading: str
    text: str
    line_start: int | None
    line_end: int | None
    tags: list[str]
    created_at: float
    expires_at: float | None
    score: float = 0.0
    by: list[str] = field(default_factory=list)  # "words", "vector"

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, "heading": self.heading, "text": self.text,
                "lines": [self.line_start, self.line_end] if self.line_start is not None else None,
                "tags": self.tags, "created_at": self.created_at, "expires_at": self.expires_at,
                "score": round(self.score, 5), "found_by": self.by}


def query_terms(text: str) -> list[str]:
    """The content words of a question, each at most once (the index's porter tokenizer stems them)."""
    raw = re.findall(r"[a-z0-9]+", text[:MAX_QUERY_CHARS].lower())
    return sorted({t for t in raw if t not in STOP_WORDS})[:MAX_TERMS]


def fts_query(text: str) -> str | None:
    """The words of a question as an FTS5 query: each a quoted term (so nothing in it is FTS syntax), any of
    them may match (bm25 ranks those with more and rarer words first)."""
    return " OR ".join(f'"{t}"' for t in query_terms(text)) or None


def _version_2(conn: Any) -> None:
    """The seam's first step: a version 1 index has its vectors moved to their table; any other (new, or a
    version 2 index from before the seam) gets the schema it lacks. In the seam's migration transaction, so
    a migration that fails half way leaves version 1 as it was and the index closed."""
    script = sql.MIGRATE_1_TO_2 if conn.execute(sql.HAS_VECTOR_COLUMN).fetchone() else sql.SCHEMA
    for statement in split_statements(script + sql.set_version(2)):
        conn.execute(statement)


def _version_3(conn: Any) -> None:
    """One FTS table per namespace, each filled from its namespace's passages; the shared one dropped."""
    for statement in split_statements(sql.MIGRATE_2_TO_3 + sql.set_version(3)):
        conn.execute(statement)
    for (ns_id,) in conn.execute(sql.FTS_NAMESPACES).fetchall():
        table = sql.fts_table(ns_id)
        conn.execute(sql.create_fts(table))
        (namespace,) = conn.execute("SELECT namespace FROM fts_namespaces WHERE id = ?", (ns_id,)).fetchone()
        conn.execute(sql.fill_fts(table), (namespace,))


class PassageIndex(SeamStore):
    schema = Schema("passages", {"sqlite": [_version_2, _version_3]})
    database_name = "passages"
    # how far a passage's making may be in the reader's future and still be read (one machine: not at all);
    # times are the process clock's (a note's life is not lengthened by the wall clock set back)
    MADE_AHEAD = 0.0

    def __init__(self, path: str | Path, embedder: Embedder) -> None:
        super().__init__(path)
        self.embedder = embedder
        # ns -> (ids, vectors transposed: dim x n, the soonest expiry among them)
        self._matrices: dict[str, tuple[np.ndarray, np.ndarray, float]] = {}
        self._fts: dict[str, str] = {}  # namespace -> its FTS table (ids never change once given)

    async def _fts_made(self, namespace: str) -> str:
        """The namespace's FTS table, given an id and created on first use (idempotent: two gateways on one
        file may both try; the id is the one the UNIQUE namespace row has)."""
        if namespace in self._fts:
            return self._fts[namespace]
        table = await self._fts_found(namespace, made=False)
        if table is None:
            await self.db.write(sql.NEW_FTS_NAMESPACE, (namespace,))
            row = await self.db.query(sql.FTS_NAMESPACE_ID, (namespace,))
            table = sql.fts_table(row[0][0])
        await self.db.write(sql.create_fts(table))
        self._fts[namespace] = table
        return table

    async def _fts_found(self, namespace: str, *, made: bool = True) -> str | None:
        """The namespace's FTS table; None when it has none (nothing was ever stored in it, or, with ``made``,
        its id given but its table not yet made: a writer stopped between the two)."""
        table = self._fts.get(namespace)
        if table is not None:
            return table
        row = await self.db.query(sql.FTS_NAMESPACE_ID, (namespace,))
        if not row:
            return None
        table = sql.fts_table(row[0][0])
        if made:
            if not await self.db.query(sql.TABLE_EXISTS, (table,)):
                return None
            self._fts[namespace] = table
        return table

    def not_open(self) -> Exception:
        return RuntimeError("the passage index is not open")

    # ---------------------------------------------------------------- writing
    async def _embed(self, texts: list[str]) -> np.ndarray:
        return await asyncio.to_thread(self.embedder.embed, texts)

    def _rows(
        self, namespace: str, passages: list[NewPassage], vectors: np.ndarray, now: float
    ) -> list[tuple[object, ...]]:
        return [
            (
                namespace,
                p.source,
                p.heading,
                p.text,
                p.line_start,
                p.line_end,
                json.dumps(p.tags),
                now,
                p.expires_at,
                self.embedder.name,
                vectors[i].astype(np.float32).tobytes(),
            )
            for i, p in enumerate(passages)
        ]

    async def replace_source(
        self, namespace: str, source: str, passages: list[NewPassage], digest: str
    ) -> bool:
        """Index a document's passages in place of what it had; False (nothing done) when its digest (text and
        embedder) is the one indexed already."""
        digest = f"{digest}:{self.embedder.name}"
        row = await self.db.query(sql.SOURCE_DIGEST, (namespace, source))
        if row and row[0][0] == digest:
            return False
        vectors = await self._embed([f"{p.heading}\n{p.text}" for p in passages])
        rows = self._rows(namespace, passages, vectors, process_clock.now())
        fts = await self._fts_made(namespace)
        await self.db.run(  # one transaction: no search sees the document half indexed
            [
                Statement(sql.unindex(fts, sql.SOURCE_ROWS), (namespace, source)),
                Statement(sql.DELETE_SOURCE, (namespace, source)),
                *(_inserted(fts, namespace, rows) if rows else []),
                Statement(sql.SET_SOURCE_DIGEST, (namespace, source, digest)),
            ]
        )
        self._matrices.pop(namespace, None)
        return True

    async def add(self, namespace: str, passage: NewPassage, *, keep: int | None = None) -> None:
        """Add one passage; with ``keep``, the namespace keeps only its newest ``keep`` passages."""
        vectors = await self._embed([passage.text])
        rows = self._rows(namespace, [passage], vectors, process_clock.now())
        fts = await self._fts_made(namespace)
        steps = _inserted(fts, namespace, rows)
        if keep is not None:
            steps.append(Statement(sql.unindex(fts, sql.BEYOND_ROWS), (namespace, keep)))
            steps.append(Statement(sql.OLDEST_BEYOND, (namespace, keep)))
        await self.db.run(steps)
        self._matrices.pop(namespace, None)

    async def purge(self, now: float | None = None) -> None:
        now = process_clock.now() if now is None else now
        ahead = now + self.MADE_AHEAD
        steps: list[Statement] = []
        # per namespace, its table told first; a namespace whose passages expired after this list was read
        # keeps them until the next purge (never deleted from passages without leaving its table)
        for (namespace,) in await self.db.query(sql.EXPIRED_NAMESPACES, (now, ahead)):
            fts = await self._fts_made(namespace)
            steps.append(Statement(sql.unindex(fts, sql.EXPIRED_ROWS), (namespace, now, ahead)))
            steps.append(Statement(sql.PURGE, (namespace, now, ahead)))
        if steps:
            await self.db.run(steps)
        self._matrices.clear()

    # ---------------------------------------------------------------- reading
    async def _matrix(self, namespace: str, now: float) -> tuple[np.ndarray, np.ndarray]:
        """The ids and the transposed vector matrix (dim x n) of a namespace's live passages."""
        held = self._matrices.get(namespace)
        if held is not None and held[2] > now:
            return held[0], held[1]
        live = await self.db.query(sql.VECTORS, (namespace, now, now + self.MADE_AHEAD))
        rows = [(i, v) for i, e, v in live if e == self.embedder.name]
        soonest = (await self.db.query(sql.SOONEST_EXPIRY, (namespace, now)))[0][0]
        ids = np.array([i for i, _ in rows], dtype=np.int64)
        mat_t = (
            np.ascontiguousarray(np.vstack([np.frombuffer(v, dtype=np.float32) for _, v in rows]).T)
            if rows
            else np.zeros((self.embedder.dim, 0), dtype=np.float32)
        )
        self._matrices[namespace] = (ids, mat_t, float(soonest) if soonest is not None else float("inf"))
        return ids, mat_t

    async def words_ranked(self, namespace: str, query: str, n: int = CANDIDATES) -> list[int]:
        """Passage ids by bm25 over the question's words, best first."""
        q = fts_query(query)
        if q is None:
            return []
        fts = await self._fts_found(namespace)
        if fts is None:
            return []
        now = process_clock.now()
        rows = await self.db.query(sql.words(fts), (q, namespace, now, now + self.MADE_AHEAD, n))
        return [pid for (pid,) in rows]

    async def _query_vector(self, query: str) -> np.ndarray:
        text = [query[:MAX_QUERY_CHARS]]
        if getattr(self.embedder, "cheap", False):  # the hashing trick: microseconds, no thread hop
            return self.embedder.embed(text)[0]
        return (await self._embed(text))[0]

    async def vector_ranked(self, namespace: str, query: str, n: int = CANDIDATES) -> list[int]:
        """Passage ids by cosine similarity to the question (positive ones only), best first."""
        ids, mat_t = await self._matrix(namespace, process_clock.now())
        if not len(ids) or not query.strip():
            return []
        qv = await self._query_vector(query)
        nz = np.flatnonzero(qv)
        # a sparse query reads only its dimensions' rows: the same sums as the full product
        sims = qv[nz] @ mat_t[nz] if nz.size * 4 < qv.size else qv @ mat_t
        if len(sims) > n:
            top = np.argpartition(-sims, n)[:n]
        else:
            top = np.arange(len(sims))
        top = top[np.lexsort((ids[top], -sims[top]))]  # best first; ties by id, so results are stable
        return [int(ids[j]) for j in top if sims[j] > 0]

    async def search(self, namespace: str, query: str, k: int = 3) -> list[Hit]:
        ranked: dict[int, tuple[float, list[str]]] = {}
        lists = (
            ("words", await self.words_ranked(namespace, query)),
            ("vector", await self.vector_ranked(namespace, query)),
        )
        for name, ids in lists:
            for rank, pid in enumerate(ids):
                s, found = ranked.get(pid, (0.0, []))
                ranked[pid] = (s + 1.0 / (RRF_K + rank + 1), found + [name])
        best = sorted(ranked.items(), key=lambda kv: (-kv[1][0], kv[0]))[:k]
        hits = {h.id: h for h in await self._fetch([pid for pid, _ in best])}
        out: list[Hit] = []
        for pid, (score, by) in best:
            h = hits.get(pid)
            if h is not None:
                h.score, h.by = score, by
                out.append(h)
        return out

    # the same SQL on both backends (``shared_index.py`` inherits these)
    async def recent(self, namespace: str, n: int) -> list[Hit]:
        now = process_clock.now()
        return [_hit(r) for r in await self.db.query(sql.RECENT, (namespace, now, now + self.MADE_AHEAD, n))]

    async def count(self, namespace: str) -> int:
        now = process_clock.now()
        return int((await self.db.query(sql.COUNT, (namespace, now, now + self.MADE_AHEAD)))[0][0])

    async def _fetch(self, ids: Iterable[int]) -> list[Hit]:
        wanted = list(ids)
        if not wanted:
            return []
        marks = ",".join("?" * len(wanted))
        return [_hit(r) for r in await self.db.query(sql.ROWS.format(ids=marks), wanted)]


def _inserted(fts: str, namespace: str, rows: list[tuple[object, ...]]) -> list[Statement]:
    """An insert of a namespace's rows and their words into its table, in the caller's transaction."""
    return [
        Statement(sql.MARK_NEW),
        Statement(sql.INSERT, rows, many=True),
        Statement(sql.index_new(fts), (namespace,)),
    ]


def _hit(row: tuple[Any, ...]) -> Hit:
    pid, _ns, source, heading, text, ls, le, tags, created, expires = row
    return Hit(pid, source, heading, text, ls, le, json.loads(tags), created, expires)
