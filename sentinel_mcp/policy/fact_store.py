"""The fact store: ground facts per session with provenance, source call and TTL, in SQLite (WAL).

The store is the source of truth and survives restarts; the Prolog engine holds a mirror of the valid
facts of the sessions in use (see ``knowledge.py``). Expired facts are never returned and are purged.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import aiosqlite
from pydantic import BaseModel, Field

from sentinel_mcp.gateway.decision import Provenance
from sentinel_mcp.policy.fact_schema import SCHEMA, SCHEMA_VERSION


class Fact(BaseModel):
    session: str
    predicate: str
    args: list[Any]
    fact: str  # canonical Prolog text
    provenance: Provenance
    source_tool: str | None = None
    source_digest: str | None = None
    contexts: list[str] = Field(default_factory=list)
    established_at: float = Field(default_factory=time.time)
    expires_at: float | None = None

    def valid_at(self, now: float) -> bool:
        return self.expires_at is None or self.expires_at > now

    @property
    def internal(self) -> bool:
        """Bookkeeping facts (fetch markers, confirmations, contexts) start with '$'."""
        return self.predicate.startswith("$")


_COLS = ("session, predicate, args, fact, provenance, source_tool, source_digest, contexts, "
         "established_at, expires_at")


def string_values(value: Any) -> Iterator[str]:
    """The strings in a JSON-like value, at any depth (what strict symbolic mode matches arguments to)."""
    if isinstance(value, (list, tuple)):
        for v in value:
            yield from string_values(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from string_values(v)
    elif isinstance(value, str):
        yield value


def _value_rows(session: str, predicate: str, args: list[Any], fact: str) -> list[tuple[str, str, str]]:
    if predicate.startswith("$"):  # bookkeeping facts ground nothing
        return []
    return [(session, v, fact) for v in set(string_values(args))]


def _row_to_fact(row: Iterable[Any]) -> Fact:
    s, p, a, f, prov, st, sd, ctx, est, exp = row
    return Fact(session=s, predicate=p, args=json.loads(a), fact=f, provenance=prov, source_tool=st,
                source_digest=sd, contexts=json.loads(ctx), established_at=est, expires_at=exp)


class FactStore:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._db: aiosqlite.Connection | None = None
        # one statement sequence at a time: concurrent fetches store their facts at the same moment
        self._lock = asyncio.Lock()

    async def open(self) -> "FactStore":
        if self._db is not None:
            return self
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = await aiosqlite.connect(str(self.path))
        await db.execute("PRAGMA journal_mode=WAL")
        await db.execute("PRAGMA synchronous=NORMAL")
        await db.executescript(SCHEMA)
        async with db.execute("SELECT value FROM meta WHERE key = 'schema_version'") as cur:
            row = await cur.fetchone()
        if row is not None and int(row[0]) < 2:  # a store from before the value index: build it once
            await db.execute("DELETE FROM fact_values")
            async with db.execute("SELECT session, predicate, args, fact FROM facts") as cur:
                rows = [r for s, p, a, f in await cur.fetchall() for r in _value_rows(s, p, json.loads(a), f)]
            await db.executemany("INSERT OR IGNORE INTO fact_values (session, value, fact) VALUES (?,?,?)", rows)
        await db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        await db.commit()
        self._db = db
        return self

    async def close(self) -> None:
        if self._db is not None:
            await self._db.close()
            self._db = None

    async def __aenter__(self) -> "FactStore":
        return await self.open()

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    @property
    def db(self) -> aiosqlite.Connection:
        if self._db is None:
            raise RuntimeError("fact store is not open")
        return self._db

    # ---------------------------------------------------------------- facts
    async def add(self, facts: list[Fact]) -> None:
        """Insert or refresh facts (same session and fact text: the newer one wins), in one transaction."""
        if not facts:
            return
        rows = [(f.session, f.predicate, json.dumps(f.args), f.fact, f.provenance, f.source_tool, f.source_digest,
                 json.dumps(f.contexts), f.established_at, f.expires_at) for f in facts]
        values = [r for f in facts for r in _value_rows(f.session, f.predicate, f.args, f.fact)]
        async with self._lock:
            await self._add(rows, values)

    async def _add(self, rows: list[tuple[Any, ...]], values: list[tuple[str, str, str]]) -> None:
        await self.db.executemany("INSERT OR IGNORE INTO fact_values (session, value, fact) VALUES (?,?,?)", values)
        await self.db.executemany(
            f"INSERT INTO facts ({_COLS}) VALUES (?,?,?,?,?,?,?,?,?,?) "
            "ON CONFLICT (session, fact) DO UPDATE SET provenance=excluded.provenance, "
            "source_tool=excluded.source_tool, source_digest=excluded.source_digest, contexts=excluded.contexts, "
            "established_at=excluded.established_at, expires_at=excluded.expires_at, args=excluded.args", rows)
        await self.db.commit()

    async def valid(self, session: str, now: float | None = None, predicate: str | None = None) -> list[Fact]:
        now = time.time() if now is None else now
        sql = f"SELECT {_COLS} FROM facts WHERE session = ? AND (expires_at IS NULL OR expires_at > ?)"
        params: list[Any] = [session, now]
        if predicate is not None:
            sql += " AND predicate = ?"
            params.append(predicate)
        async with self._lock, self.db.execute(sql + " ORDER BY id", params) as cur:
            return [_row_to_fact(r) async for r in cur]

    async def known_values(self, session: str, values: Iterable[str], now: float | None = None) -> set[str]:
        """Which of these strings are arguments of a valid non-internal fact of the session (an indexed
        look-up per value; the session's other facts are never read)."""
        now = time.time() if now is None else now
        wanted = sorted(set(values))
        found: set[str] = set()
        for i in range(0, len(wanted), 500):  # below SQLite's limit of host parameters
            chunk = wanted[i:i + 500]
            sql = ("SELECT DISTINCT v.value FROM fact_values v JOIN facts f ON f.session = v.session AND f.fact = v.fact "
                   f"WHERE v.session = ? AND v.value IN ({','.join('?' * len(chunk))}) "
                   "AND (f.expires_at IS NULL OR f.expires_at > ?)")
            async with self._lock, self.db.execute(sql, [session, *chunk, now]) as cur:
                found.update([r[0] async for r in cur])
        return found

    async def delete(self, session: str, fact_texts: list[str]) -> None:
        if not fact_texts:
            return
        pairs = [(session, t) for t in fact_texts]
        async with self._lock:
            await self.db.executemany("DELETE FROM facts WHERE session = ? AND fact = ?", pairs)
            await self.db.executemany("DELETE FROM fact_values WHERE session = ? AND fact = ?", pairs)
            await self.db.commit()

    async def delete_depending_on(self, session: str, context: str) -> list[str]:
        """Delete the facts established through a context (rebinding it makes them meaningless)."""
        async with self._lock, self.db.execute(
                "SELECT fact, contexts FROM facts WHERE session = ? AND contexts != '[]'", (session,)) as cur:
            doomed = [f async for f, ctx in cur if context in json.loads(ctx)]
        await self.delete(session, doomed)
        return doomed

    async def purge_expired(self, now: float | None = None) -> int:
        now = time.time() if now is None else now
        async with self._lock:
            await self.db.execute(
                "DELETE FROM fact_values WHERE EXISTS (SELECT 1 FROM facts f WHERE f.session = fact_values.session "
                "AND f.fact = fact_values.fact AND f.expires_at IS NOT NULL AND f.expires_at <= ?)", (now,))
            cur = await self.db.execute("DELETE FROM facts WHERE expires_at IS NOT NULL AND expires_at <= ?", (now,))
            await self.db.commit()
        return cur.rowcount or 0

    async def sessions(self) -> list[str]:
        async with self._lock, self.db.execute(
                "SELECT DISTINCT session FROM facts UNION SELECT DISTINCT session FROM contexts ORDER BY 1") as cur:
            return [r[0] async for r in cur]

    async def count(self, session: str | None = None) -> int:
        sql, params = "SELECT COUNT(*) FROM facts", ()
        if session is not None:
            sql, params = sql + " WHERE session = ?", (session,)
        async with self._lock, self.db.execute(sql, params) as cur:
            row = await cur.fetchone()
        return int(row[0]) if row else 0

    # ---------------------------------------------------------------- contexts
    async def bind_context(self, session: str, name: str, value: Any) -> None:
        async with self._lock:
            await self.db.execute(
                "INSERT INTO contexts (session, name, value, bound_at) VALUES (?,?,?,?) "
                "ON CONFLICT (session, name) DO UPDATE SET value=excluded.value, bound_at=excluded.bound_at",
                (session, name, json.dumps(value), time.time()))
            await self.db.commit()

    async def contexts(self, session: str) -> dict[str, Any]:
        async with self._lock, self.db.execute(
                "SELECT name, value FROM contexts WHERE session = ? ORDER BY name", (session,)) as cur:
            return {n: json.loads(v) async for n, v in cur}

    # ---------------------------------------------------------------- summary
    async def summary(self, session: str, open_askables: list[str] | None = None, now: float | None = None,
                      max_facts: int = 200, shows: Callable[[Fact], bool] | None = None) -> str:
        """A compact text for an LLM's context: valid facts (those ``shows`` lets through), bound contexts,
        open questions."""
        now = time.time() if now is None else now
        facts = [f for f in await self.valid(session, now) if not f.internal and (shows is None or shows(f))]
        ctx = await self.contexts(session)
        lines = [f"Session {session}: {len(facts)} valid fact(s)."]
        if ctx:
            lines.append("Contexts: " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in ctx.items()))
        else:
            lines.append("Contexts: none bound.")
        for f in facts[:max_facts]:
            ttl = "session" if f.expires_at is None else f"{max(0, int(f.expires_at - now))}s left"
            lines.append(f"  {f.fact}  [{f.provenance}, {ttl}]")
        if len(facts) > max_facts:
            lines.append(f"  ... {len(facts) - max_facts} more")
        if open_askables:
            lines.append("Open questions (answer with sentinel_answer, or ask the user):")
            lines.extend(f"  {q}" for q in open_askables)
        return "\n".join(lines)
