"""Optional SQLite persistence of A2A tasks, so a restart loses no task a peer may still ask about.

The in-memory ``TaskStore`` serves reads while running. A state others may act on (finished, waiting for
input) is committed here before it becomes visible (``commit``); passing states are queued (``save``);
both go through the storage seam's group commit. On open, finished
tasks come back as they were; a task that waits for input comes back still resumable (its pending call
is stored); a task that was running when the process stopped comes back FAILED, saying so.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from pathlib import Path
from typing import Any, Sequence

from sentinel_mcp.a2a import task_lease
from sentinel_mcp.a2a.protocol import Message, Part, Task, TaskStatus, now_iso
from sentinel_mcp.a2a.task_store import PendingCall, TaskRecord
from sentinel_mcp.storage import Schema, Statement, StorageError, open_database
from sentinel_mcp.storage.instances import take_over_rows
from sentinel_mcp.storage.location import is_server_url
from sentinel_mcp.storage.open import release

log = logging.getLogger(__name__)

# a task's row on both backends; a server store (several replicas) adds the task's lease (``task_lease.py``):
# the replica running it, that process's token and until when (the database's clock) it is known to be alive
_TASK_TABLE = """
CREATE TABLE IF NOT EXISTS a2a_task (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    session_id TEXT NOT NULL,
    state TEXT NOT NULL,
    updated TEXT NOT NULL,
    task TEXT NOT NULL,
    pending TEXT{lease}
)"""
_SCHEMA_SQL = _TASK_TABLE.format(lease="") + """;
CREATE INDEX IF NOT EXISTS a2a_task_updated ON a2a_task(updated)
"""
# SQLite keeps the lease columns too (one schema), unused there: one process owns its journal.
_LEASE_COLS = """
ALTER TABLE a2a_task ADD COLUMN replica TEXT NOT NULL DEFAULT '';
ALTER TABLE a2a_task ADD COLUMN lease_holder TEXT NOT NULL DEFAULT '';
ALTER TABLE a2a_task ADD COLUMN lease_until DOUBLE PRECISION
"""
_PG_LEASE = """,
    replica TEXT NOT NULL DEFAULT '',
    lease_holder TEXT NOT NULL DEFAULT '',
    lease_until DOUBLE PRECISION"""
_PG_SQL = _TASK_TABLE.format(lease=_PG_LEASE) + """;
CREATE INDEX IF NOT EXISTS a2a_task_owner ON a2a_task(owner, updated);
CREATE INDEX IF NOT EXISTS a2a_task_lease ON a2a_task(lease_until)
    WHERE state IN ('TASK_STATE_SUBMITTED','TASK_STATE_WORKING');
CREATE INDEX IF NOT EXISTS a2a_task_holder ON a2a_task(lease_holder)
    WHERE state IN ('TASK_STATE_SUBMITTED','TASK_STATE_WORKING')
"""
# every leased write and every take-over counts the row's revision, so a take-over can be conditional on the
# exact round it read (``claim``): holder and state alone repeat when the task waits for input again
_REV_SQLITE = "ALTER TABLE a2a_task ADD COLUMN rev INTEGER NOT NULL DEFAULT 0"
_REV_PG = "ALTER TABLE a2a_task ADD COLUMN IF NOT EXISTS rev BIGINT NOT NULL DEFAULT 0"
# a cancel asked for on a replica that does not run the task, for the replica that does (``cancel_asked``)
_CANCEL_SQLITE = "ALTER TABLE a2a_task ADD COLUMN cancel_asked TEXT"
_CANCEL_PG = "ALTER TABLE a2a_task ADD COLUMN IF NOT EXISTS cancel_asked TEXT"
SCHEMA = Schema(
    "a2a_tasks",
    {
        "sqlite": [_SCHEMA_SQL, _LEASE_COLS, _REV_SQLITE, _CANCEL_SQLITE],
        "postgres": [_PG_SQL, _REV_PG, _CANCEL_PG],
    },
)
_RUNNING = ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
_INTERRUPTED = ("TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED")
_ROW_COLS = "id, owner, session_id, state, updated, task, pending"
_ADOPT = f"INSERT INTO a2a_task ({_ROW_COLS}) VALUES (?,?,?,?,?,?,?) ON CONFLICT(id) DO NOTHING"
_SAVE = (
    "INSERT INTO a2a_task (id, owner, session_id, state, updated, task, pending) VALUES (?,?,?,?,?,?,?) "
    "ON CONFLICT(id) DO UPDATE SET state=excluded.state, updated=excluded.updated, task=excluded.task, "
    "pending=excluded.pending"
)
# shared store: the row carries this process's lease while the task runs; a process whose lease was ended
# (another replica ended the task) changes nothing any more (``WHERE`` on the holder: ``RETURNING`` says so)
_SAVE_LEASED = (
    "INSERT INTO a2a_task (id, owner, session_id, state, updated, task, pending, replica, lease_holder, "
    f"lease_until) VALUES (?,?,?,?,?,?,?,?,?, CASE WHEN ? THEN {task_lease.NOW} + ? ELSE NULL END) "
    "ON CONFLICT(id) DO UPDATE SET state=excluded.state, updated=excluded.updated, task=excluded.task, "
    "pending=excluded.pending, lease_until=excluded.lease_until, rev=a2a_task.rev + 1, "
    # a cancel asked by another replica holds only while the task runs: a later round starts without it
    f"cancel_asked=CASE WHEN excluded.state IN {task_lease.RUNNING} THEN a2a_task.cancel_asked ELSE NULL END "
    "WHERE a2a_task.lease_holder = excluded.lease_holder RETURNING id"
)
_READ_COLS = "owner, session_id, task, pending, replica, lease_holder, rev"


class LeaseLost(StorageError):
    """This process no longer holds the task: another replica ended it (its lease lapsed meanwhile)."""


class TaskJournal:
    def __init__(
        self, path: Path | str, replica: str | None = None, lease_seconds: float = task_lease.LEASE_SECONDS
    ) -> None:
        """``path``: the gateway's SQLite journal, or the ``postgresql://`` URL replicas share (tasks are then
        leased, ``task_lease.py``, and read through from any replica); ``replica``: this replica's name."""
        self.path = path
        self.shared = is_server_url(path)
        self.replica = replica or "replica"
        self.named = bool(replica)  # only a replica that knows its name may end "its own" old tasks at start
        self.holder = task_lease.new_holder(self.replica)
        self.lease_seconds = lease_seconds
        self._db: Any = None
        self._inflight: set[asyncio.Future[Any]] = set()

    @property
    def db(self) -> Any:
        if self._db is None:
            raise StorageError("A2A task journal is closed")
        return self._db

    async def open(self, adopt: Sequence[Path] = ()) -> list[TaskRecord]:
        """Open (creating it if needed) and return the stored tasks, oldest first. ``adopt``: journals of
        gateways that have ended (dead instances, a journal from before instances); their tasks move here."""
        self._db = open_database(self.path, "a2a_tasks")
        await self._db.migrate(SCHEMA)
        if self.shared:
            return await self._open_shared()
        for source in adopt:
            try:
                moved = await asyncio.to_thread(self._adopt, Path(source))
            except StorageError as e:  # ours cannot be written: the source keeps them, for a later start
                log.warning("A2A task journal: could not take over %s: %s", source, e)
                continue
            if moved:
                log.info("A2A task journal: took over %d task(s) from %s", moved, source)
        records = []
        rows = await self._db.query("SELECT owner, session_id, task, pending FROM a2a_task ORDER BY updated")
        for owner, session_id, task_json, pending_json in rows:
            record = _record((owner, session_id, task_json, pending_json, "", "", 0))
            if record is None:
                continue
            if record.task.status.state in _RUNNING:
                _interrupted(record)
                await self.commit(record)
            records.append(record)
        return records

    def _adopt(self, source: Path) -> int:
        """Move the tasks of an ended gateway's journal into this one (blocking; in a thread): durable here
        before they are deleted there (``storage.instances.take_over_rows``)."""
        def keep(rows: list[tuple[Any, ...]]) -> None:
            self.db.run_blocking([Statement(_ADOPT, rows, many=True)])

        return take_over_rows(source, "a2a_task", _ROW_COLS, keep)

    async def _open_shared(self) -> list[TaskRecord]:
        """A shared store: end this replica's own running tasks left by its previous process (at once: it
        knows they are dead) and everybody's lapsed ones; take back this replica's tasks that wait for input
        (their pending call is stored, so they stay resumable here). Other tasks are read through."""
        if not self.named:
            await self.end_lapsed()
            return []
        for tid in await task_lease.end_own_old(self.db, self.replica, self.holder):
            log.warning("A2A task %s: this replica restarted while it ran; ended FAILED (not run again)", tid)
        await self.end_lapsed()
        taken = await self.db.write(
            "UPDATE a2a_task SET lease_holder=?, rev=rev + 1 WHERE replica=? AND lease_holder<>? "
            "AND state IN (?, ?) AND pending IS NOT NULL RETURNING id",
            (self.holder, self.replica, self.holder, *_INTERRUPTED),
        )
        ids = [r[0] for r in taken.rows]
        if not ids:
            return []
        marks = ", ".join("?" for _ in ids)
        rows = await self.db.query(
            f"SELECT {_READ_COLS} FROM a2a_task WHERE id IN ({marks}) ORDER BY updated", tuple(ids)
        )
        return [r for r in (_record(row) for row in rows) if r is not None]

    async def end_lapsed(self) -> list[str]:
        ended = await task_lease.end_lapsed(self.db)
        for tid, replica in ended:
            log.warning(
                "A2A task %s of replica %s: its lease lapsed; ended FAILED (not run again)",
                tid,
                replica or "?",
            )
        return [tid for tid, _ in ended]

    async def renew(self, task_ids: list[str]) -> set[str]:
        return await task_lease.renew(self.db, task_ids, self.holder, self.lease_seconds)

    async def read(self, task_id: str, owner: str) -> TaskRecord | None:
        """A task from the shared store (any replica's), if it is ``owner``'s: one round trip."""
        rows = await self.db.query(
            f"SELECT {_READ_COLS} FROM a2a_task WHERE id = ? AND owner = ?", (task_id, owner)
        )
        return _record(rows[0]) if rows else None

    async def claim(self, record: TaskRecord) -> bool:
        """Take over a task another replica holds while it waits for input (nothing runs for it there): one
        statement, so of two replicas claiming (or continuing) at once exactly one gets it. The replica that
        held it can no longer write it (its next commit raises ``LeaseLost``), so it never runs it too. Only
        the exact round ``record`` was read in is taken (its revision): a read that is older than another
        replica's whole round (take-over, run, waiting again) takes nothing, so its pending call, already run,
        never runs again."""
        out = await self.db.write(
            "UPDATE a2a_task SET lease_holder=?, replica=?, rev=rev + 1 WHERE id=? AND owner=? AND "
            "lease_holder=? AND rev=? AND state IN (?, ?) AND pending IS NOT NULL RETURNING rev",
            (
                self.holder,
                self.replica,
                record.task.id,
                record.owner,
                record.holder,
                record.rev,
                *_INTERRUPTED,
            ),
        )
        if out.rows:
            record.rev = int(out.rows[0][0])
        return bool(out.rows)

    async def ask_cancel(self, task_id: str, owner: str) -> str | None:
        """Ask the replica running ``owner``'s task to cancel it (it looks every ``task_lease.CANCEL_POLL``
        seconds, ``asked_cancels``): the replica's name, or None when the task is not running (any more)."""
        out = await self.db.write(
            f"UPDATE a2a_task SET cancel_asked={task_lease.NOW_TEXT} WHERE id=? AND owner=? "
            f"AND state IN {task_lease.RUNNING} AND lease_holder <> '' RETURNING replica",
            (task_id, owner),
        )
        return str(out.rows[0][0] or "?") if out.rows else None

    async def asked_cancels(self, task_ids: list[str]) -> list[str]:
        """Which of the tasks running here another replica asked to cancel (one indexed read)."""
        if not task_ids:
            return []
        rows = await self.db.query(
            f"SELECT id FROM a2a_task WHERE lease_holder=? AND state IN {task_lease.RUNNING} "
            "AND cancel_asked IS NOT NULL AND id = ANY(?)",
            (self.holder, list(task_ids)),
        )
        return [str(r[0]) for r in rows]

    async def owned(self, owner: str, limit: int) -> list[TaskRecord]:
        """``owner``'s newest ``limit`` tasks in the shared store, whichever replica made them: one round
        trip."""
        rows = await self.db.query(
            f"SELECT {_READ_COLS} FROM a2a_task WHERE owner = ? ORDER BY updated DESC, id DESC LIMIT ?",
            (owner, limit),
        )
        return [r for r in (_record(row) for row in rows) if r is not None]

    async def waiting(self, owner: str, limit: int) -> list[TaskRecord]:
        """``owner``'s newest ``limit`` tasks waiting for input in the shared store, whichever replica holds
        them (what its console inbox shows): one indexed round trip."""
        rows = await self.db.query(
            f"SELECT {_READ_COLS} FROM a2a_task WHERE owner = ? AND state IN (?, ?) AND pending IS NOT NULL "
            "ORDER BY updated DESC, id DESC LIMIT ?",
            (owner, *_INTERRUPTED, limit),
        )
        return [r for r in (_record(row) for row in rows) if r is not None]

    def _row(self, record: TaskRecord, task: Task | None = None) -> tuple[Any, ...]:
        task = task or record.task
        pending = json.dumps(record.pending.__dict__) if record.pending else None
        row = (
            task.id,
            record.owner,
            record.session_id,
            task.status.state,
            task.status.timestamp or now_iso(),
            task.model_dump_json(by_alias=True, exclude_none=True),
            pending,
        )
        if not self.shared:
            return row
        return (*row, self.replica, self.holder, task.status.state in _RUNNING, self.lease_seconds)

    async def commit(self, record: TaskRecord, task: Task | None = None) -> None:
        """Store the task (or the state it is about to take, ``task``) durably; raises ``StorageError``
        (``LeaseLost`` when another replica ended the task meanwhile: nothing was changed)."""
        if not self.shared:
            await self.db.write(_SAVE, self._row(record, task))
            return
        out = await self.db.write(_SAVE_LEASED, self._row(record, task))
        if not out.rows:
            raise LeaseLost(f"task {record.task.id} was ended by another replica (this one lost its lease)")

    def save(self, record: TaskRecord) -> None:
        """Queue the task's current state (a passing state: WORKING); never blocks, never raises."""
        if self._db is None:
            return
        self._track(
            self._db.submit_write([Statement(_SAVE_LEASED if self.shared else _SAVE, self._row(record))])
        )

    def delete(self, task_id: str) -> None:
        if self._db is not None:
            self._track(self._db.submit_write([Statement("DELETE FROM a2a_task WHERE id = ?", (task_id,))]))

    def _track(self, fut: "asyncio.Future[Any]") -> None:
        self._inflight.add(fut)

        def done(f: "asyncio.Future[Any]") -> None:
            self._inflight.discard(f)
            if not f.cancelled() and f.exception() is not None:
                log.warning("A2A task journal: write failed: %s", f.exception())

        fut.add_done_callback(done)

    async def close(self) -> None:
        if self._inflight:
            await asyncio.gather(*self._inflight, return_exceptions=True)
        if self._db is not None:
            db, self._db = self._db, None
            await release(db)


def _record(row: tuple[Any, ...]) -> TaskRecord | None:
    owner, session_id, task_json, pending_json, replica, holder, rev = row
    try:
        return TaskRecord(
            task=Task.model_validate_json(task_json),
            owner=owner,
            session_id=session_id,
            pending=PendingCall(**json.loads(pending_json)) if pending_json else None,
            replica=replica or "",
            holder=holder or "",
            rev=int(rev or 0),
        )
    except (ValueError, TypeError) as e:  # one bad row must not hide the others
        log.warning("A2A task journal: skipping an unreadable task (%s)", e)
        return None


def _interrupted(record: TaskRecord) -> None:
    task = record.task
    note = Message(
        message_id=str(uuid.uuid4()),
        context_id=task.context_id,
        task_id=task.id,
        role="ROLE_AGENT",
        parts=[Part.of_text("the agent restarted while this task was running; it did not finish")],
    )
    task.history = [*(task.history or []), note]
    task.status = TaskStatus(state="TASK_STATE_FAILED", message=note, timestamp=now_iso())
    record.pending = None
