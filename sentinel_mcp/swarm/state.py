"""The swarm's store (behind the storage seam): tasks, steps, api_calls — the audit trail of every build.

Every change is committed before it returns, so a state a caller was told about survives a crash."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any, Self

from sentinel_mcp.storage import Database, Schema, open_database
from sentinel_mcp.storage.open import release
from sentinel_mcp.storage.sqlite import SHARED

TERMINAL_STATES = ("COMPLETED", "FAILED")
OWNER = "owner"  # the device owner's principal (stdio clients, the CLI)
STATES = ("PLANNING", "EXECUTING", "VERIFYING") + TERMINAL_STATES

_SQL = """
CREATE TABLE IF NOT EXISTS tasks (
    task_id TEXT PRIMARY KEY,
    state TEXT NOT NULL CHECK (state IN ('PLANNING','EXECUTING','VERIFYING','COMPLETED','FAILED')),
    spec_json TEXT NOT NULL,
    session TEXT NOT NULL DEFAULT '',
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
CREATE INDEX IF NOT EXISTS api_calls_task ON api_calls(task_id)
"""


def _add_principal(conn: sqlite3.Connection) -> None:
    """Builds belong to a principal; a store from before that holds the owner's builds."""
    if "principal" not in {r[1] for r in conn.execute("PRAGMA table_info(tasks)")}:
        conn.execute(f"ALTER TABLE tasks ADD COLUMN principal TEXT NOT NULL DEFAULT '{OWNER}'")


SCHEMA = Schema("swarm", {"sqlite": [_SQL, _add_principal]})


class SwarmStore:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._db: Database | None = None

    async def open(self) -> SwarmStore:
        # shared: the swarm CLI reads builds while a gateway runs them (rollback journal, still no -shm mmap)
        db = open_database(self.path, "swarm", SHARED)
        try:
            await db.migrate(SCHEMA)
        except BaseException:
            await release(db)
            raise
        self._db = db
        return self

    async def close(self) -> None:
        if self._db is not None:
            db, self._db = self._db, None
            await release(db)

    async def __aenter__(self) -> Self:
        return await self.open()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def db(self) -> Database:
        if self._db is None:
            raise RuntimeError("SwarmStore is not open")
        return self._db

    async def _write(self, sql: str, params: tuple[Any, ...]) -> None:
        await self.db.write(sql, params)

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
        ids = [r[0] for r in await self.db.query("SELECT task_id FROM tasks WHERE state NOT IN ('COMPLETED','FAILED')")]
        for tid in ids:
            await self.set_state(tid, "FAILED", error=reason)
        return ids

    async def get_task(self, task_id: str) -> dict[str, Any] | None:
        rows = await self.db.query_dicts("SELECT * FROM tasks WHERE task_id=?", (task_id,))
        return _task_dict(rows[0]) if rows else None

    async def list_tasks(self, limit: int = 20, principal: str | None = None) -> list[dict[str, Any]]:
        """The newest builds (of ``principal`` only, when named)."""
        return [_task_dict(r) for r in await self.db.query_dicts(
            "SELECT * FROM tasks WHERE (? IS NULL OR principal = ?) ORDER BY created_at DESC LIMIT ?",
            (principal, principal, limit))]

    async def steps_of(self, task_id: str) -> list[dict[str, Any]]:
        rows = await self.db.query_dicts("SELECT * FROM steps WHERE task_id=? ORDER BY id", (task_id,))
        return [dict(r) | {"issues": json.loads(r["issues_json"]), "warnings": json.loads(r["warnings_json"])}
                for r in rows]

    async def api_calls_of(self, task_id: str) -> list[dict[str, Any]]:
        return await self.db.query_dicts("SELECT * FROM api_calls WHERE task_id=? ORDER BY id", (task_id,))

    # ---- retention (issue 17): read-only; the sweep removes files, never rows (the audit trail stays) ----
    async def failed_before(self, cutoff: float) -> list[str]:
        """Tasks that ended FAILED before ``cutoff`` (Unix time): their workspaces may be swept."""
        rows = await self.db.query("SELECT task_id FROM tasks WHERE state='FAILED' "
                                   "AND COALESCE(finished_at, updated_at) < ? ORDER BY created_at", (cutoff,))
        return [r[0] for r in rows]


def _task_dict(row: dict[str, Any]) -> dict[str, Any]:
    d = dict(row)
    for key in ("spec_json", "plan_json", "report_json", "warnings_json"):
        raw = d.pop(key)
        d[key.removesuffix("_json")] = json.loads(raw) if raw else None
    return d
