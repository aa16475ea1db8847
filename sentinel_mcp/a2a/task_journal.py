"""Optional SQLite persistence of A2A tasks, so a restart loses no task a peer may still ask about.

The in-memory ``TaskStore`` stays the source of truth while running; every change of a task is queued
here and written in batches by one writer task (aiosqlite, WAL), like the audit log. On open, finished
tasks come back as they were; a task that waits for input comes back still resumable (its pending call
is stored); a task that was running when the process stopped comes back FAILED, saying so.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from pathlib import Path

import aiosqlite

from sentinel_mcp.a2a.protocol import Message, Part, Task, TaskStatus, now_iso
from sentinel_mcp.a2a.task_store import PendingCall, TaskRecord

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS a2a_task (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    session_id TEXT NOT NULL,
    state TEXT NOT NULL,
    updated TEXT NOT NULL,
    task TEXT NOT NULL,
    pending TEXT
);
CREATE INDEX IF NOT EXISTS a2a_task_updated ON a2a_task(updated);
"""
_RUNNING = ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")


class TaskJournal:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: aiosqlite.Connection | None = None
        self._queue: asyncio.Queue[tuple[str, str, tuple] | None] = asyncio.Queue()
        self._writer: asyncio.Task[None] | None = None

    async def open(self) -> list[TaskRecord]:
        """Open (creating it if needed) and return the stored tasks, oldest first."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = await aiosqlite.connect(self.path)
        await self._db.execute("PRAGMA journal_mode=WAL")
        await self._db.executescript(SCHEMA)
        await self._db.commit()
        records = []
        async with self._db.execute("SELECT owner, session_id, task, pending FROM a2a_task ORDER BY updated") as rows:
            async for owner, session_id, task_json, pending_json in rows:
                try:
                    record = TaskRecord(task=Task.model_validate_json(task_json), owner=owner, session_id=session_id,
                                        pending=PendingCall(**json.loads(pending_json)) if pending_json else None)
                except (ValueError, TypeError) as e:  # one bad row must not hide the others
                    log.warning("A2A task journal: skipping an unreadable task (%s)", e)
                    continue
                if record.task.status.state in _RUNNING:
                    _interrupted(record)
                records.append(record)
        self._writer = asyncio.create_task(self._write_loop(), name="a2a-task-journal")
        for record in records:
            if record.task.status.state == "TASK_STATE_FAILED":
                self.save(record)
        return records

    def save(self, record: TaskRecord) -> None:
        """Queue the task's current state; never blocks, never raises."""
        if self._writer is None:
            return
        pending = json.dumps(record.pending.__dict__) if record.pending else None
        row = (record.task.id, record.owner, record.session_id, record.task.status.state,
               record.task.status.timestamp or now_iso(), record.task.model_dump_json(by_alias=True, exclude_none=True),
               pending)
        self._queue.put_nowait(("save", record.task.id, row))

    def delete(self, task_id: str) -> None:
        if self._writer is not None:
            self._queue.put_nowait(("delete", task_id, (task_id,)))

    async def _write_loop(self) -> None:
        assert self._db is not None
        while True:
            item = await self._queue.get()
            batch = [item]
            while not self._queue.empty():
                batch.append(self._queue.get_nowait())
            stop = None in batch
            try:
                for entry in batch:
                    if entry is None:
                        continue
                    op, _, row = entry
                    if op == "save":
                        await self._db.execute(
                            "INSERT INTO a2a_task (id, owner, session_id, state, updated, task, pending)"
                            " VALUES (?,?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET state=excluded.state,"
                            " updated=excluded.updated, task=excluded.task, pending=excluded.pending", row)
                    else:
                        await self._db.execute("DELETE FROM a2a_task WHERE id = ?", row)
                await self._db.commit()
            except Exception:
                log.exception("A2A task journal: write failed (%d changes lost)", len(batch))
            if stop:
                return

    async def close(self) -> None:
        if self._writer is not None:
            self._queue.put_nowait(None)
            await self._writer
            self._writer = None
        if self._db is not None:
            await self._db.close()
            self._db = None


def _interrupted(record: TaskRecord) -> None:
    task = record.task
    note = Message(message_id=str(uuid.uuid4()), context_id=task.context_id, task_id=task.id, role="ROLE_AGENT",
                   parts=[Part.of_text("the agent restarted while this task was running; it did not finish")])
    task.history = [*(task.history or []), note]
    task.status = TaskStatus(state="TASK_STATE_FAILED", message=note, timestamp=now_iso())
    record.pending = None
