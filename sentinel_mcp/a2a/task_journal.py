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

from sentinel_mcp.a2a import task_lease, task_rows, unsigned_tasks
from sentinel_mcp.a2a.protocol import Message, Part, Task, TaskStatus, now_iso
from sentinel_mcp.a2a.task_store import PendingCall, TaskRecord
from sentinel_mcp.core.display_text import compose, safe_text
from sentinel_mcp.storage import Schema, Statement, StorageError, open_database
from sentinel_mcp.storage.database import StatementError, WriteResult
from sentinel_mcp.storage.instances import take_over_rows
from sentinel_mcp.storage.location import is_server_url
from sentinel_mcp.storage.open import release
from sentinel_mcp.storage.row_signature import PROCESS_KEY

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
# a shared store's rows are signed (``task_rows.py``); rows from before are refused (they end as their
# leases or waits would, unread)
_MAC_PG = "ALTER TABLE a2a_task ADD COLUMN IF NOT EXISTS mac TEXT NOT NULL DEFAULT ''"
SCHEMA = Schema(
    "a2a_tasks",
    {
        "sqlite": [_SCHEMA_SQL, _LEASE_COLS, _REV_SQLITE, _CANCEL_SQLITE],
        "postgres": [_PG_SQL, _REV_PG, _CANCEL_PG, _MAC_PG],
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
# (another replica ended the task) changes nothing any more (``WHERE`` on the holder: ``RETURNING`` says so).
# Signed (``task_rows.py``), its revision counted here: the holder is its only writer
_SAVE_LEASED = (
    f"INSERT INTO a2a_task ({task_rows.COLUMNS}, lease_until) VALUES (?,?,?,?,?,?,?,?,?,?,?, "
    f"CASE WHEN ? THEN {task_lease.NOW} + ? ELSE NULL END) "
    "ON CONFLICT(id) DO UPDATE SET owner=excluded.owner, session_id=excluded.session_id, "
    "state=excluded.state, updated=excluded.updated, task=excluded.task, replica=excluded.replica, "
    "pending=excluded.pending, lease_until=excluded.lease_until, rev=excluded.rev, mac=excluded.mac, "
    # a cancel asked by another replica holds only while the task runs: a later round starts without it
    f"cancel_asked=CASE WHEN excluded.state IN {task_lease.RUNNING} THEN a2a_task.cancel_asked ELSE NULL END "
    "WHERE a2a_task.lease_holder = excluded.lease_holder RETURNING id"
)
_READ_COLS = task_rows.COLUMNS
_WAITING_ROWS = f"state IN ('{_INTERRUPTED[0]}', '{_INTERRUPTED[1]}') AND pending IS NOT NULL"
# a take-over: conditional on the exact row verified (its round, its holder, its signature), signed anew
_CLAIM = (
    "UPDATE a2a_task SET lease_holder=?, replica=?, rev=?, mac=? WHERE id=? AND owner=? AND lease_holder=? "
    f"AND rev=? AND mac=? AND {_WAITING_ROWS} RETURNING rev"
)
# ending a running task FAILED (``end_lapsed``, ``_end_own_old``): conditional on the row verified, so of
# replicas sweeping at once each task is ended by exactly one (the others' condition no longer holds)
_END = (
    "UPDATE a2a_task SET state='TASK_STATE_FAILED', updated=?, task=?, pending=NULL, lease_holder='', "
    "lease_until=NULL, cancel_asked=NULL, rev=?, mac=? WHERE id=? AND rev=? AND mac=? "
    f"AND state IN {task_lease.RUNNING}"
)
_SWEEP = 100  # running rows a sweep reads at most


class LeaseLost(StorageError):
    """This process no longer holds the task: another replica ended it (its lease lapsed meanwhile)."""


class TaskJournal:
    def __init__(
        self, path: Path | str, replica: str | None = None, lease_seconds: float = task_lease.LEASE_SECONDS,
        key: bytes | None = None,
    ) -> None:
        """``path``: the gateway's SQLite journal, or the ``postgresql://`` URL replicas share (tasks are then
        leased, ``task_lease.py``, and read through from any replica); ``replica``: this replica's name;
        ``key``: what a shared store's rows are signed with (the cluster's; None: this process's own)."""
        self.key = key if key is not None else PROCESS_KEY
        self._revisions = task_rows.Revisions()
        self._refused = task_rows.Refused()
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
            record = _parsed(owner, session_id, task_json, pending_json)
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
        rows = await self.db.query(
            f"SELECT {_READ_COLS} FROM a2a_task WHERE state IN {task_lease.RUNNING} AND replica = ? "
            "AND lease_holder <> ? AND id <> ALL(?) ORDER BY id", (self.replica, self.holder, self._skip()))
        for tid in await self._end(rows, task_lease.RESTARTED, lapsed=False):
            log.warning("A2A task %s: this replica restarted while it ran; ended FAILED (not run again)", tid)
        await self.end_lapsed()
        rows = await self.db.query(
            f"SELECT {_READ_COLS} FROM a2a_task WHERE replica=? AND lease_holder<>? AND {_WAITING_ROWS} "
            "ORDER BY updated", (self.replica, self.holder))
        records = [r for r in (self._record(row) for row in rows) if r is not None]
        return [r for r in records if await self.claim(r)]  # each taken back as a take-over would be

    def _skip(self) -> list[str]:
        return list(self._refused.ids)

    async def end_lapsed(self) -> list[str]:
        """End running tasks whose lease lapsed, each by exactly one replica of the cluster (their ids)."""
        rows = await self.db.query(
            f"SELECT {_READ_COLS} FROM a2a_task WHERE state IN {task_lease.RUNNING} AND lease_until < "
            f"{task_lease.NOW} AND id <> ALL(?) ORDER BY lease_until LIMIT ?", (self._skip(), _SWEEP))
        old = [r for r in rows if unsigned_tasks.from_before(r)]
        ended = await self._end([r for r in rows if not unsigned_tasks.from_before(r)], task_lease.LAPSED,
                                lapsed=True)
        return ended + await self._end_from_before(old)

    async def _end_from_before(self, rows: list[tuple[Any, ...]]) -> list[str]:
        """Lapsed running rows from before signing: ended FAILED, nothing of them kept (unsigned_tasks.py)."""
        statements = []
        for row in rows:
            statement = unsigned_tasks.end(self.key, self.replica, row)
            if statement is not None:
                statements.append(statement)
            elif self._refused.add(row[0] if row else "?"):
                log.warning("A2A task row %s refused: from before signing and not a task to end",
                            safe_text(str(row[0] if row else "?"), 80))
        if not statements:
            return []
        ended = [str(tid) for out in await self.db.run(statements) for (tid,) in out.rows]
        for tid in ended:
            log.warning("A2A task %s: stored before task rows were signed and its lease lapsed; ended FAILED "
                        "(nothing of it kept or run)", safe_text(tid, 80))
        return ended

    async def _end(self, rows: list[tuple[Any, ...]], tail: str, *, lapsed: bool) -> list[str]:
        """End these running tasks FAILED with the reason, each signed anew from the row verified (a row that
        is not verified is never ended: nothing of it is signed afresh)."""
        statements, ended = [], []
        for record in sorted((r for r in map(self._record, rows) if r is not None), key=lambda r: r.task.id):
            if record.stored is None or record.task.status.state not in _RUNNING:
                continue
            task = task_lease.ended(record, tail)
            row = (task.id, record.owner, record.session_id, "TASK_STATE_FAILED", task.status.timestamp,
                   task.model_dump_json(by_alias=True, exclude_none=True), None, record.replica, "",
                   record.rev + 1)
            sql = _END + (f" AND lease_until < {task_lease.NOW}" if lapsed else "") + " RETURNING id, replica"
            statements.append(Statement(sql, (row[4], row[5], row[9], task_rows.mac(self.key, row), task.id,
                                              record.rev, record.stored[task_rows.WIDTH])))
        if not statements:
            return []
        for out in await self.db.run(statements):
            for tid, replica in out.rows:
                ended.append(str(tid))
                if lapsed:
                    log.warning("A2A task %s of replica %s: its lease lapsed; ended FAILED (not run again)",
                                tid, replica or "?")
        return ended

    @property
    def refused(self) -> int:
        """Rows refused here (not signed by a replica of this cluster, or an older version put back)."""
        return self._refused.count

    def _record(self, row: tuple[Any, ...]) -> TaskRecord | None:
        """A shared store's row (``_READ_COLS``) as a task, if it is signed by a replica of this cluster and
        not older than a version seen here; refused (counted, logged once per task) otherwise."""
        why = None
        if not task_rows.verified(self.key, row):
            why = "not signed by a replica of this cluster"
        elif not self._revisions.fresh(row[0], int(row[9])):
            why = "an older version than one this replica has seen (put back)"
        if why is not None:
            if self._refused.add(row[0] if row else "?"):
                log.warning("A2A task row %s refused: %s", str(row[0] if row else "?")[:80], why)
            return None
        tid, owner, session, state, _, task_json, pending_json, replica, holder, rev = row[:task_rows.WIDTH]
        record = _parsed(owner, session, task_json, pending_json, replica, holder, int(rev))
        if record is None or record.task.id != tid or record.task.status.state != state:
            if self._refused.add(tid):
                log.warning("A2A task row %s refused: its task does not match its columns", str(tid)[:80])
            return None
        record.stored = tuple(row)
        return record

    async def renew(self, task_ids: list[str]) -> set[str]:
        return await task_lease.renew(self.db, task_ids, self.holder, self.lease_seconds)

    async def read(self, task_id: str, owner: str) -> TaskRecord | None:
        """A task from the shared store (any replica's), if it is ``owner``'s: one round trip."""
        rows = await self.db.query(
            f"SELECT {_READ_COLS} FROM a2a_task WHERE id = ? AND owner = ?", (task_id, owner)
        )
        return self._record(rows[0]) if rows else None

    async def claim(self, record: TaskRecord) -> bool:
        """Take over a task another replica holds while it waits for input (nothing runs for it there): one
        statement, so of two replicas claiming (or continuing) at once exactly one gets it. The replica that
        held it can no longer write it (its next commit raises ``LeaseLost``), so it never runs it too. Only
        the exact round ``record`` was read in is taken (its revision): a read that is older than another
        replica's whole round (take-over, run, waiting again) takes nothing, so its pending call, already run,
        never runs again."""
        read = record.stored
        if read is None:  # not read from this store (nothing verified to sign anew)
            return False
        row = (*read[:7], self.replica, self.holder, record.rev + 1)
        mac = task_rows.mac(self.key, row)
        out = await self.db.write(_CLAIM, (self.holder, self.replica, record.rev + 1, mac, record.task.id,
                                           record.owner, record.holder, record.rev, read[task_rows.WIDTH]))
        if out.rows:
            record.rev = int(out.rows[0][0])
            record.stored = (*row, mac)
            self._revisions.saw(record.task.id, record.rev)
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
        return [r for r in (self._record(row) for row in rows) if r is not None]

    async def waiting(self, owners: Sequence[str], limit: int) -> list[TaskRecord]:
        """At most ``limit`` tasks of ``owners`` waiting for input in the shared store, whichever replica
        holds them (what a console inbox shows: the owner's shows every A2A peer's too): one indexed round
        trip whatever the number of owners (one per owner was N queries of ``limit`` rows each a page).

        The first owner named (the viewer) has all its own first, up to ``limit``; the others share what is
        left by turns, each one's newest first (every owner's newest, then every owner's second...). The
        newest ``limit`` of all together let 10+ peers sending new tasks push the viewer's older waiting
        ones out of sight, and one peer flooding hide the others'."""
        # one name is one owner (a str is a Sequence too: list("alice") would be five one-letter owners)
        names = [owners] if isinstance(owners, str) else list(dict.fromkeys(owners))
        if not names:
            return []
        rows = await self.db.query(
            f"SELECT {_READ_COLS} FROM (SELECT {_READ_COLS}, ROW_NUMBER() OVER (PARTITION BY owner "
            f"ORDER BY updated DESC, id DESC) AS turn FROM a2a_task WHERE owner = ANY(?) AND {_WAITING_ROWS}"
            ") AS w WHERE turn <= ? "
            "ORDER BY CASE WHEN owner = ? THEN 0 ELSE 1 END, turn, updated DESC, id DESC LIMIT ?",
            (names, limit, names[0], limit),
        )
        return [r for r in (self._record(row) for row in rows) if r is not None]

    def _row(self, record: TaskRecord, task: Task | None = None) -> tuple[Any, ...]:
        task = task or record.task
        pending = json.dumps(record.pending.__dict__) if record.pending else None
        try:
            body = task.model_dump_json(by_alias=True, exclude_none=True)
        except ValueError as e:  # a lone surrogate in a client's text: no JSON holds it; the write is refused
            raise StatementError(compose("A2A task journal: task ", safe_text(task.id, 80),
                                         " cannot be kept: ", safe_text(str(e), 200))) from e
        row = (
            task.id,
            record.owner,
            record.session_id,
            task.status.state,
            task.status.timestamp or now_iso(),
            body,
            pending,
        )
        if not self.shared:
            return row
        signed = (*row, self.replica, self.holder, record.rev + 1)
        return (*signed, task_rows.mac(self.key, signed), task.status.state in _RUNNING, self.lease_seconds)

    def _counted(self, record: TaskRecord, row: tuple[Any, ...], *, landed: bool) -> None:
        """A shared row written (``landed``) or queued: its revision is the record's now (the holder counts
        them). Only one known to be written is the newest this replica has seen (a queued one may fail)."""
        if self.shared:
            record.rev += 1
            record.stored = row[:task_rows.WIDTH + 1]
            if landed:
                self._revisions.saw(record.task.id, record.rev)

    async def commit(self, record: TaskRecord, task: Task | None = None,
                     also: Sequence[Statement] = ()) -> list[WriteResult]:
        """Store the task (or the state it is about to take, ``task``) durably, with ``also`` in the same
        transaction (their results returned); raises ``StorageError`` (``LeaseLost`` when another replica
        ended the task meanwhile)."""
        if not self.shared:
            return (await self.db.run([Statement(_SAVE, self._row(record, task)), *also]))[1:]
        row = self._row(record, task)
        results = await self.db.run([Statement(_SAVE_LEASED, row), *also])
        out = results[0]
        if out.rows:
            self._counted(record, row, landed=True)
        if not out.rows:
            raise LeaseLost(f"task {record.task.id} was ended by another replica (this one lost its lease)")
        return results[1:]

    def save(self, record: TaskRecord) -> None:
        """Queue the task's current state (a passing state: WORKING); never blocks, never raises."""
        if self._db is None:
            return
        try:
            row = self._row(record)
        except StorageError as e:
            log.warning("A2A task journal: write refused: %s", e)
            return
        self._counted(record, row, landed=False)  # the next write counts on from it, landed or not
        self._track(self._db.submit_write([Statement(_SAVE_LEASED if self.shared else _SAVE, row)]))

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


def _parsed(owner: Any, session_id: Any, task_json: Any, pending_json: Any, replica: Any = "",
            holder: Any = "", rev: int = 0) -> TaskRecord | None:
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
