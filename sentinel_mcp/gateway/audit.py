"""The audit log: every call with its decision, proof, policy version, upstream, latency and outcome.

SQLite through aiosqlite (WAL). Entries are queued and written in batches by one writer task, so the
hot path of a tool call never waits for the disk; ``flush()`` waits until everything queued is committed.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path
from typing import Any

import aiosqlite
from pydantic import BaseModel, Field

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ts REAL NOT NULL,
    session TEXT NOT NULL,
    client TEXT,
    origin TEXT NOT NULL,
    tool TEXT NOT NULL,
    upstream TEXT,
    arg_digest TEXT,
    arguments TEXT,
    decision TEXT NOT NULL,
    reason TEXT,
    proof TEXT,
    policy_version TEXT,
    latency_ms REAL,
    outcome TEXT NOT NULL,
    error TEXT,
    principal TEXT
);
CREATE INDEX IF NOT EXISTS audit_ts ON audit(ts);
CREATE INDEX IF NOT EXISTS audit_session ON audit(session);
"""

MAX_ARGS_CHARS = 4000


class AuditEntry(BaseModel):
    ts: float = Field(default_factory=time.time)
    session: str
    principal: str | None = None  # who the call ran for
    client: str | None = None
    origin: str = "client"
    tool: str
    upstream: str | None = None
    arg_digest: str | None = None
    arguments: Any = None
    decision: str  # allow | deny | ask | error
    reason: str | None = None
    proof: Any = None
    policy_version: str | None = None
    latency_ms: float | None = None
    outcome: str  # ok | tool_error | denied | asked | cancelled | timeout | upstream_error | unknown_tool | bad_arguments
    error: str | None = None


def _json(value: Any, limit: int | None = None) -> str | None:
    if value is None:
        return None
    text = json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)
    if limit and len(text) > limit:
        text = text[:limit] + "…"
    return text


class AuditLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: aiosqlite.Connection | None = None
        self._queue: asyncio.Queue[AuditEntry | None] = asyncio.Queue()
        self._writer: asyncio.Task[None] | None = None
        self._idle = asyncio.Event()
        self._idle.set()

    async def open(self) -> "AuditLog":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = await aiosqlite.connect(self.path)
        await self._db.execute("PRAGMA journal_mode=WAL")
        await self._db.execute("PRAGMA synchronous=NORMAL")
        await self._db.executescript(SCHEMA)
        async with self._db.execute("PRAGMA table_info(audit)") as cur:
            if "principal" not in {r[1] async for r in cur}:  # a log from before principals
                await self._db.execute("ALTER TABLE audit ADD COLUMN principal TEXT")
        await self._db.commit()
        self._writer = asyncio.create_task(self._write_loop(), name="audit-writer")
        return self

    def record(self, entry: AuditEntry) -> None:
        """Queue an entry; never blocks and never raises."""
        self._idle.clear()
        self._queue.put_nowait(entry)

    async def flush(self) -> None:
        if self._writer is None:
            return
        while not (self._queue.empty() and self._idle.is_set()):
            await asyncio.sleep(0.005)

    async def _write_loop(self) -> None:
        assert self._db is not None
        while True:
            entry = await self._queue.get()
            if entry is None:
                self._idle.set()
                return
            batch = [entry]
            while not self._queue.empty() and len(batch) < 500:
                nxt = self._queue.get_nowait()
                if nxt is None:
                    await self._write(batch)
                    self._idle.set()
                    return
                batch.append(nxt)
            await self._write(batch)
            if self._queue.empty():
                self._idle.set()

    async def _write(self, batch: list[AuditEntry]) -> None:
        assert self._db is not None
        rows = [(e.ts, e.session, e.client, e.origin, e.tool, e.upstream, e.arg_digest,
                 _json(e.arguments, MAX_ARGS_CHARS), e.decision, e.reason, _json(e.proof, 20000),
                 e.policy_version, e.latency_ms, e.outcome, e.error, e.principal) for e in batch]
        try:
            await self._db.executemany(
                "INSERT INTO audit (ts, session, client, origin, tool, upstream, arg_digest, arguments, decision,"
                " reason, proof, policy_version, latency_ms, outcome, error, principal)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
            await self._db.commit()
        except Exception:  # the audit log must never take the gateway down
            log.exception("audit write failed (%d entries lost)", len(batch))

    async def close(self) -> None:
        if self._writer is not None:
            self._queue.put_nowait(None)
            await self._writer
            self._writer = None
        if self._db is not None:
            await self._db.close()
            self._db = None


async def read_audit(path: Path, tail: int = 20, session: str | None = None,
                     principal: str | None = None) -> list[dict[str, Any]]:
    """The newest ``tail`` entries, oldest first (for ``sentinel-mcp audit``); ``principal``: only theirs."""
    if not path.exists():
        return []
    async with aiosqlite.connect(path) as db:
        db.row_factory = aiosqlite.Row
        conds = [(c, v) for c, v in (("session = ?", session), ("principal = ?", principal)) if v]
        where = ("WHERE " + " AND ".join(c for c, _ in conds)) if conds else ""
        params = [v for _, v in conds]
        cur = await db.execute(f"SELECT * FROM audit {where} ORDER BY id DESC LIMIT ?", [*params, tail])
        rows = [dict(r) for r in await cur.fetchall()]
    for r in rows:
        for k in ("arguments", "proof"):
            if r.get(k):
                try:
                    r[k] = json.loads(r[k])
                except (json.JSONDecodeError, TypeError):
                    pass
    return list(reversed(rows))
