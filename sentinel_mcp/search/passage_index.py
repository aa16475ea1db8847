"""The passage index: words (SQLite FTS5, bm25) and vectors (cosine), fused by reciprocal rank.

Both lists rank the live passages of one namespace; a passage's fused score is the sum of 1 / (60 + rank)
over the lists it is in (reciprocal rank fusion), so a passage found by both beats one found by either. The
vectors of a namespace are kept in memory as one matrix (rebuilt after a write to it), so a search is one
FTS query plus one matrix product.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import aiosqlite
import numpy as np

from sentinel_mcp.search import index_sql as sql
from sentinel_mcp.search.embedding import STOP_WORDS, Embedder

RRF_K = 60
CANDIDATES = 50  # from each list
MAX_QUERY_CHARS = 2000


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


def fts_query(text: str) -> str | None:
    """The words of a question as an FTS5 query: each a quoted term (so nothing in it is FTS syntax), any of
    them may match (bm25 ranks those with more and rarer words first)."""
    raw = re.findall(r"[a-z0-9]+", text[:MAX_QUERY_CHARS].lower())
    terms = sorted({t for t in raw if t not in STOP_WORDS})[:64]  # the index's porter tokenizer stems them
    return " OR ".join(f'"{t}"' for t in terms) or None


class PassageIndex:
    def __init__(self, path: str | Path, embedder: Embedder) -> None:
        self.path = Path(path)
        self.embedder = embedder
        self._db: aiosqlite.Connection | None = None
        self._lock = asyncio.Lock()
        self._matrices: dict[str, tuple[np.ndarray, np.ndarray, float]] = {}  # ns -> (ids, vectors, expiry min)

    async def open(self) -> "PassageIndex":
        if self._db is not None:
            return self
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = await aiosqlite.connect(str(self.path))
        await db.execute("PRAGMA journal_mode=WAL")
        await db.execute("PRAGMA synchronous=NORMAL")
        await db.executescript(sql.SCHEMA)
        await db.execute("INSERT OR REPLACE INTO index_meta (key, value) VALUES ('schema_version', ?)",
                         (str(sql.SCHEMA_VERSION),))
        await db.commit()
        self._db = db
        return self

    async def close(self) -> None:
        if self._db is not None:
            await self._db.close()
            self._db = None

    @property
    def db(self) -> aiosqlite.Connection:
        if self._db is None:
            raise RuntimeError("the passage index is not open")
        return self._db

    # ---------------------------------------------------------------- writing
    async def _embed(self, texts: list[str]) -> np.ndarray:
        return await asyncio.to_thread(self.embedder.embed, texts)

    def _rows(self, namespace: str, passages: list[NewPassage], vectors: np.ndarray, now: float) -> list[tuple]:
        return [(namespace, p.source, p.heading, p.text, p.line_start, p.line_end, json.dumps(p.tags), now,
                 p.expires_at, self.embedder.name, vectors[i].astype(np.float32).tobytes())
                for i, p in enumerate(passages)]

    async def replace_source(self, namespace: str, source: str, passages: list[NewPassage], digest: str) -> bool:
        """Index a document's passages in place of what it had; False (nothing done) when its digest (text and
        embedder) is the one indexed already."""
        digest = f"{digest}:{self.embedder.name}"
        async with self._lock:
            async with self.db.execute(sql.SOURCE_DIGEST, (namespace, source)) as cur:
                row = await cur.fetchone()
        if row is not None and row[0] == digest:
            return False
        vectors = await self._embed([f"{p.heading}\n{p.text}" for p in passages])
        rows = self._rows(namespace, passages, vectors, time.time())
        async with self._lock:
            await self.db.execute(sql.DELETE_SOURCE, (namespace, source))
            await self.db.executemany(sql.INSERT, rows)
            await self.db.execute(sql.SET_SOURCE_DIGEST, (namespace, source, digest))
            await self.db.commit()
        self._matrices.pop(namespace, None)
        return True

    async def add(self, namespace: str, passage: NewPassage, *, keep: int | None = None) -> None:
        """Add one passage; with ``keep``, the namespace keeps only its newest ``keep`` passages."""
        vectors = await self._embed([passage.text])
        async with self._lock:
            await self.db.executemany(sql.INSERT, self._rows(namespace, [passage], vectors, time.time()))
            if keep is not None:
                await self.db.execute(sql.OLDEST_BEYOND, (namespace, keep))
            await self.db.commit()
        self._matrices.pop(namespace, None)

    async def purge(self, now: float | None = None) -> None:
        async with self._lock:
            await self.db.execute(sql.PURGE, (time.time() if now is None else now,))
            await self.db.commit()
        self._matrices.clear()

    # ---------------------------------------------------------------- reading
    async def _matrix(self, namespace: str, now: float) -> tuple[np.ndarray, np.ndarray]:
        held = self._matrices.get(namespace)
        if held is not None and held[2] > now:
            return held[0], held[1]
        async with self._lock, self.db.execute(sql.VECTORS, (namespace, now)) as cur:
            rows = [(i, v) for i, e, v in await cur.fetchall() if e == self.embedder.name]
        ids = np.array([i for i, _ in rows], dtype=np.int64)
        mat = (np.vstack([np.frombuffer(v, dtype=np.float32) for _, v in rows]) if rows
               else np.zeros((0, self.embedder.dim), dtype=np.float32))
        async with self._lock, self.db.execute(
                "SELECT MIN(expires_at) FROM passages WHERE namespace = ? AND expires_at > ?", (namespace, now)) as cur:
            soonest = (await cur.fetchone())[0]
        self._matrices[namespace] = (ids, mat, float(soonest) if soonest is not None else float("inf"))
        return ids, mat

    async def search(self, namespace: str, query: str, k: int = 3) -> list[Hit]:
        now = time.time()
        ranked: dict[int, tuple[float, list[str]]] = {}
        q = fts_query(query)
        if q is not None:
            async with self._lock, self.db.execute(sql.WORDS, (q, namespace, now, CANDIDATES)) as cur:
                for rank, (pid,) in enumerate(await cur.fetchall()):
                    s, by = ranked.get(pid, (0.0, []))
                    ranked[pid] = (s + 1.0 / (RRF_K + rank + 1), by + ["words"])
        ids, mat = await self._matrix(namespace, now)
        if len(ids) and query.strip():
            qv = (await self._embed([query[:MAX_QUERY_CHARS]]))[0]
            sims = mat @ qv
            top = np.argsort(-sims)[:CANDIDATES]
            for rank, j in enumerate(top):
                if sims[j] <= 0:
                    break
                pid = int(ids[j])
                s, by = ranked.get(pid, (0.0, []))
                ranked[pid] = (s + 1.0 / (RRF_K + rank + 1), by + ["vector"])
        best = sorted(ranked.items(), key=lambda kv: (-kv[1][0], kv[0]))[:k]
        hits = {h.id: h for h in await self._fetch([pid for pid, _ in best])}
        out = []
        for pid, (score, by) in best:
            h = hits.get(pid)
            if h is not None:
                h.score, h.by = score, by
                out.append(h)
        return out

    async def recent(self, namespace: str, n: int) -> list[Hit]:
        async with self._lock, self.db.execute(sql.RECENT, (namespace, time.time(), n)) as cur:
            return [_hit(r) for r in await cur.fetchall()]

    async def count(self, namespace: str) -> int:
        async with self._lock, self.db.execute(sql.COUNT, (namespace, time.time())) as cur:
            return int((await cur.fetchone())[0])

    async def _fetch(self, ids: Iterable[int]) -> list[Hit]:
        ids = list(ids)
        if not ids:
            return []
        async with self._lock, self.db.execute(sql.ROWS.format(ids=",".join("?" * len(ids))), ids) as cur:
            return [_hit(r) for r in await cur.fetchall()]


def _hit(row: tuple) -> Hit:
    pid, _ns, source, heading, text, ls, le, tags, created, expires = row
    return Hit(pid, source, heading, text, ls, le, json.loads(tags), created, expires)
