"""The swarm's SQLite store (aiosqlite, WAL): tasks, steps, api_calls — the audit trail of every build."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Self

import aiosqlite

TERMINAL_STATES = ("COMPLETED", "FAILED")
OWNER = "owner"  # the device owner's principal (stdio clients, the CLI)
STATES = ("PLANNING", "EXECUTING", "VERIFYING") + TERMINAL_STATES

SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks (
    task_id TEXT PRIMARY KEY,
    state TEXT NOT NULL CHECK (state IN ('PLANNING','EXECUTING','VERIFYING','COMPLETED','FAILED')),
    spec_json TEXT NOT NULL,
    session TEXT NOT NULL DEFAULT '',
    principal TEXT NOT NULL DEFAULT '',
    backend TEXT NOT NULL DEFAULT '',
    workspace TEXT NOT NULL,
    plan_json TEXT,
    report_json TEXT,
    warnings_json TEXT NOT NULL DEFAULT '[]',
    error TEXT,
    model_calls INTEGER NOT NULL DEFAULT 0,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    finished_at REAL
);
CREATE TABLE IF NOT EXISTS steps (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id TEXT NOT NULL REFERENCES tasks(task_id),
    step_number INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    file_path TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ACCEPTED','REJECTED','FAILED')),
    issues_json TEXT NOT NULL DEFAULT '[]',
    warnings_json TEXT NOT NULL DEFAULT '[]',
    bytes INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS steps_task ON steps(task_id, step_number);
CREATE TABLE IF NOT EXISTS api_calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id TEXT NOT NULL REFERENCES tasks(task_id),
    step_number INTEGER,
    role TEXT NOT NULL,
    backend TEXT NOT NULL,
    model TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL CHECK (status IN ('OK','ERROR')),
    attempts INTEGER NOT NULL DEFAULT 1,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    duration_ms INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS api_calls_task ON api_calls(task_id);
"""


class SwarmStore:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._db: aiosqlite.Connection | None = None

    async def open(self) -> SwarmStore:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = await aiosqlite.connect(self.path)
        self._db.row_factory = aiosqlite.Row
        await self._db.execute("PRAGMA journal_mode=WAL")
        # WAL + NORMAL: never corrupt; a power cut may lose the last commits, not the file
        await self._db.execute("PRAGMA synchronous=NORMAL")
        await self._db.execute("PRAGMA busy_timeout=5000")
        await self._db.executescript(SCHEMA)
        async with self._db.execute("PRAGMA table_info(tasks)") as cur:
            columns = {r["name"] for r in await cur.fetchall()}
        if "principal" not in columns:  # a store from before builds had owners: its builds are the owner's
            await self._db.execute(f"ALTER TABLE tasks ADD COLUMN principal TEXT NOT NULL DEFAULT '{OWNER}'")
        await self._db.commit()
        return self

    async def close(self) -> None:
        if self._db is not None:
            await self._db.close()
            self._db = None

    async def __aenter__(self) -> Self:
        return await self.open()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def db(self) -> aiosqlite.Connection:
        if self._db is None:
            raise RuntimeError("SwarmStore is not open")
        return self._db

    async def _write(self, sql: str, params: tuple[Any, ...]) -> None:
        async with self.db.execute(sql, params):
            pass
        await self.db.commit()

    async def create_task(self, task_id: str, spec: dict[str, Any], workspace: Path, *, session: str = "",
                          backend: str = "", principal: str = OWNER) -> None:
        now = time.time()
        await self._write(
            "INSERT INTO tasks (task_id, state, spec_json, session, principal, backend, workspace, created_at, "
            "updated_at) VALUES (?, 'PLANNING', ?, ?, ?, ?, ?, ?, ?)",
            (task_id, json.dumps(spec), session, principal, backend, str(workspace), now, now))

    async def set_state(self, task_id: str, state: str, *, error: str | None = None) -> None:
        assert state in STATES
        now = time.time()
        finished = now if state in TERMINAL_STATES else None
        await self._write("UPDATE tasks SET state=?, error=COALESCE(?, error), updated_at=?, "
                          "finished_at=COALESCE(?, finished_at) WHERE task_id=?",
                          (state, error, now, finished, task_id))

    async def set_plan(self, task_id: str, plan: dict[str, Any]) -> None:
        await self._write("UPDATE tasks SET plan_json=?, updated_at=? WHERE task_id=?",
                          (json.dumps(plan), time.time(), task_id))

    async def set_report(self, task_id: str, report: dict[str, Any]) -> None:
        await self._write("UPDATE tasks SET report_json=?, updated_at=? WHERE task_id=?",
                          (json.dumps(report), time.time(), task_id))

    async def set_counters(self, task_id: str, model_calls: int, prompt_tokens: int, completion_tokens: int,
                           warnings: list[str]) -> None:
        await self._write("UPDATE tasks SET model_calls=?, prompt_tokens=?, completion_tokens=?, warnings_json=?, "
                          "updated_at=? WHERE task_id=?",
                          (model_calls, prompt_tokens, completion_tokens, json.dumps(warnings), time.time(), task_id))

    async def record_step(self, task_id: str, step_number: int, attempt: int, file_path: str, status: str,
                          issues: list[dict[str, Any]], warnings: list[str], size: int) -> None:
        await self._write(
            "INSERT INTO steps (task_id, step_number, attempt, file_path, status, issues_json, warnings_json, bytes,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (task_id, step_number, attempt, file_path, status, json.dumps(issues), json.dumps(warnings), size,
             time.time()))

    async def record_api_call(self, task_id: str, *, step_number: int | None, role: str, backend: str, model: str,
                              status: str, attempts: int, prompt_tokens: int, completion_tokens: int,
                              duration_ms: int, error: str | None) -> None:
        await self._write(
            "INSERT INTO api_calls (task_id, step_number, role, backend, model, status, attempts, prompt_tokens,"
            " completion_tokens, duration_ms, error, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (task_id, step_number, role, backend, model, status, attempts, prompt_tokens, completion_tokens,
             duration_ms, error, time.time()))

    async def fail_unfinished(self, reason: str) -> list[str]:
        """Tasks left mid-run by a dead process become FAILED (state kept), e.g. at start-up."""
        async with self.db.execute("SELECT task_id FROM tasks WHERE state NOT IN ('COMPLETED','FAILED')") as cur:
            ids = [r[0] for r in await cur.fetchall()]
        for tid in ids:
            await self.set_state(tid, "FAILED", error=reason)
        return ids

    async def get_task(self, task_id: str) -> dict[str, Any] | None:
        async with self.db.execute("SELECT * FROM tasks WHERE task_id=?", (task_id,)) as cur:
            row = await cur.fetchone()
        return _task_dict(row) if row else None

    async def list_tasks(self, limit: int = 20, principal: str | None = None) -> list[dict[str, Any]]:
        """The newest builds (of ``principal`` only, when named)."""
        async with self.db.execute("SELECT * FROM tasks WHERE (? IS NULL OR principal = ?) "
                                   "ORDER BY created_at DESC LIMIT ?", (principal, principal, limit)) as cur:
            return [_task_dict(r) for r in await cur.fetchall()]

    async def steps_of(self, task_id: str) -> list[dict[str, Any]]:
        async with self.db.execute("SELECT * FROM steps WHERE task_id=? ORDER BY id", (task_id,)) as cur:
            rows = await cur.fetchall()
        return [dict(r) | {"issues": json.loads(r["issues_json"]), "warnings": json.loads(r["warnings_json"])}
                for r in rows]

    async def api_calls_of(self, task_id: str) -> list[dict[str, Any]]:
        async with self.db.execute("SELECT * FROM api_calls WHERE task_id=? ORDER BY id", (task_id,)) as cur:
            return [dict(r) for r in await cur.fetchall()]

    # ---- retention (issue 17): read-only; the sweep removes files, never rows (the audit trail stays) ----
    async def failed_before(self, cutoff: float) -> list[str]:
        """Tasks that ended FAILED before ``cutoff`` (Unix time): their workspaces may be swept."""
        async with self.db.execute("SELECT task_id FROM tasks WHERE state='FAILED' "
                                   "AND COALESCE(finished_at, updated_at) < ? ORDER BY created_at", (cutoff,)) as cur:
            return [r[0] for r in await cur.fetchall()]


def _task_dict(row: aiosqlite.Row) -> dict[str, Any]:
    d = dict(row)
    for key in ("spec_json", "plan_json", "report_json", "warnings_json"):
        raw = d.pop(key)
        d[key.removesuffix("_json")] = json.loads(raw) if raw else None
    return d
