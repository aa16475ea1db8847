"""SQLite behind the storage seam: one writer thread per file, group commit, fail-closed health.

Why this shape (measured in ``benchmarks/audit_durability.py``):

- Every write waits for its commit (``synchronous=FULL``: on disk, not just in the OS cache), and the
  writer thread commits everything queued at that moment in ONE transaction: N concurrent writers share
  one fsync. Each job runs in its own SAVEPOINT, so a job's constraint error fails that job alone.
- ``mmap_size=0`` and, for files only this process writes, ``locking_mode=EXCLUSIVE`` with WAL: the
  wal-index then lives in heap memory instead of the mmapped ``-shm`` file, so no fault on a file (truncated,
  made immutable, disk error) can raise SIGBUS; it becomes an I/O error we report. Files that other
  processes write at the same time (the sensor CLI grants consent while the server runs) use a rollback
  journal instead (no ``-shm`` either; slower commits, but those stores write rarely).
- A file deleted or replaced under us is noticed before each commit (inode check), reported, and
  re-created with its schemas on the next attempt, so the gateway recovers by itself.
- A caller alone may commit on its own thread when the writer is idle (``write_inline``): a call's audit row
  otherwise waits for two thread wake-ups, which cost about as much as the commit (0.1-0.2 ms of a ~0.45 ms
  write, measured with one client). Off while the store is degraded, and for a while when recent commits
  there were slow (``inline_policy.py``): the caller's thread (the event loop) is held for the commit.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import time
from pathlib import Path
from typing import Any, Callable

from sentinel_mcp.storage.copy_hold import CheckpointHold
from sentinel_mcp.storage.database import Params, Statement, StorageError, WriteResult
from sentinel_mcp.storage.group_answers import resolver, settle_all
from sentinel_mcp.storage.health import StoreHealth, register, unregister
from sentinel_mcp.storage.idle_checkpoint import IdleCheckpoint
from sentinel_mcp.storage.inline_policy import InlinePolicy
from sentinel_mcp.storage.job_writer import Done, Job, JobWriter
from sentinel_mcp.storage.private_paths import private_dir, private_file
from sentinel_mcp.storage.row_bytes import MAX_ROW_BYTES
from sentinel_mcp.storage.schema import Schema
from sentinel_mcp.storage.sqlite_faults import cannot_grow, is_fault
from sentinel_mcp.storage.sqlite_migration import BACKEND, apply_schema
from sentinel_mcp.storage.sqlite_options import EXCLUSIVE, PROCESS as PROCESS, SHARED as SHARED, SQLiteOptions
from sentinel_mcp.storage.sqlite_schema_guard import declare, is_stale
from sentinel_mcp.storage.statement_refusal import refuse_nan, refused
from sentinel_mcp.storage.wal_presize import presize_wal

log = logging.getLogger(__name__)


def _close_quietly(conn: sqlite3.Connection | None) -> None:
    if conn is not None:
        try:
            conn.close()
        except sqlite3.Error:
            pass


def _sha256hex(text: str | None) -> str:
    import hashlib

    return hashlib.sha256((text or "").encode("utf-8", "surrogatepass")).hexdigest()


class SQLiteDatabase(JobWriter):
    """Implements ``storage.Database`` for one SQLite file: reads, writes and migrations all on the writer
    thread (``job_writer.py``), which owns the one connection."""

    backend = BACKEND
    multi_row_values = True  # storage.Database: the audit and the facts write rows in multi-row lists

    def __init__(self, path: Path, name: str, options: SQLiteOptions = EXCLUSIVE) -> None:
        self.path = Path(path)
        self.name = name
        self.options = options
        # what every commit's checks read, made once (a path's text and the mode were made per commit)
        self._file = str(self.path)
        self._wal_file = f"{self._file}-wal"
        self._wal_mode = options.journal.upper() == "WAL"
        # NORMAL in WAL mode: a commit is in the OS's cache, not on disk, as it returns (config_audit.py)
        self.health = StoreHealth(name, sync="process" if options.synchronous.upper() == "NORMAL" else "full")
        self._schemas: list[Schema] = []
        self._conn: sqlite3.Connection | None = None
        self._hold: CheckpointHold | None = None  # checkpoints held off while a reader copies the file
        self._identity: tuple[int, int] | None = None
        # the file's size as last seen: in WAL mode only a checkpoint writes it, only growing it (no VACUUM)
        self._size = 0
        # the write-ahead log as we last saw it (device, inode, size): SQLite keeps writing to the file it
        # holds open, so one removed, replaced or cut under us must be noticed by us (``_wal_moved``)
        self._wal: tuple[int, int, int] | None = None
        # answers for the event loop, handed over once per group (one wake-up), not once per job
        self._settled: list[tuple[asyncio.AbstractEventLoop, Callable[[], None]]] = []
        self.commits = 0  # transactions committed, and the write jobs they carried (group commit at work)
        self.committed_jobs = 0
        self.inline_commits = 0  # of those, committed on the caller's thread (``write_inline``)
        self.inline_policy = InlinePolicy()  # whether the caller's thread may commit, from recent durations
        # the log checkpointed by a job of the writer's, not inside a caller's commit (``idle_checkpoint.py``)
        self.idle_checkpoint = IdleCheckpoint() if self._wal_mode and options.exclusive else None

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> "SQLiteDatabase":
        connected = False
        try:
            self._connect(presize=False)
            connected = True
        except StorageError as e:  # start degraded (calls are refused) and retry on each write
            self._fault(e)
        self._start_writer()
        if connected and self._wal_mode:  # the writer's first job, not the opener's (serve: the event loop's)
            self._put(Job("call", self._presize, _unheard))
        register(self.health)
        return self

    def _connect(self, presize: bool = True) -> None:
        conn: sqlite3.Connection | None = None
        try:
            private_dir(self.path.parent)
            private_file(self.path)
            # exclusive: nobody else should wait on it, and a probe must not hold the writer for long
            timeout = 0.5 if self.options.exclusive else self.options.busy_timeout_ms / 1000
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=timeout)
            conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_ROW_BYTES)  # rows, values read: row_bytes.py
            conn.execute("PRAGMA mmap_size=0")
            conn.execute(f"PRAGMA cache_size=-{int(self.options.cache_kib)}")
            # a group's savepoint sub-journals (and sorts) in memory: on file each group made a temp file in
            # /var/tmp, opened, written and unlinked (issue 21); they only roll a job back within its group,
            # the commit's own journal (durability) is unaffected
            conn.execute("PRAGMA temp_store=MEMORY")
            if self.options.exclusive:
                conn.execute("PRAGMA locking_mode=EXCLUSIVE")  # before WAL's first use: no -shm at all
            mode = conn.execute(f"PRAGMA journal_mode={self.options.journal}").fetchone()[0]
            if mode.upper() != self.options.journal.upper():
                raise sqlite3.OperationalError(f"journal mode {mode} instead of {self.options.journal}")
            conn.execute(f"PRAGMA synchronous={self.options.synchronous}")
            conn.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
            conn.create_function("sha256hex", 1, _sha256hex, deterministic=True)
            conn.execute(
                "CREATE TABLE IF NOT EXISTS storage_schema (store TEXT PRIMARY KEY, version INTEGER NOT NULL)"
            )
            for schema in self._schemas:
                apply_schema(conn, schema, self._declare)
            self._declare(conn)
            if presize and self.options.journal.upper() == "WAL":
                presize_wal(conn, self.path)
            st = os.stat(self.path)
            hold = CheckpointHold(self.path, conn) if self.options.journal.upper() == "WAL" else None
        except sqlite3.Error as e:
            # a failed open must let go of its lock: kept, the retry would read it as another process's
            _close_quietly(conn)
            if cannot_grow(e):
                raise self._full(e) from e
            if "locked" in str(e) and self.options.exclusive:
                raise StorageError(
                    f"{self.name} store {self.path} is held by another process (a file one process owns: a "
                    "gateway "
                    "keeps its own under <data dir>/instances/; is this path configured for two of them?)"
                ) from e
            raise StorageError(f"{self.name} store {self.path}: {e}") from e
        except OSError as e:
            _close_quietly(conn)
            raise StorageError(f"{self.name} store {self.path}: {e.strerror or e}") from e
        self._drop_hold()
        self._conn, self._identity, self._wal, self._hold = conn, (st.st_dev, st.st_ino), None, hold
        self._size = st.st_size

    async def migrate(self, schema: Schema) -> None:
        if all(s.store != schema.store for s in self._schemas):
            self._schemas.append(schema)  # re-applied whenever the file has to be re-created
        await self._submit("call", lambda conn: self._migrate(conn, schema))

    def migrate_blocking(self, schema: Schema) -> None:
        if all(s.store != schema.store for s in self._schemas):
            self._schemas.append(schema)
        self._submit_blocking("call", lambda conn: self._migrate(conn, schema))

    def _migrate(self, conn: sqlite3.Connection, schema: Schema) -> None:
        self._declare(conn)  # a data step on a guarded table must not meet a stale guard
        apply_schema(conn, schema, self._declare)
        self._declare(conn)

    def _declare(self, conn: sqlite3.Connection) -> None:
        if not self.options.exclusive:  # a file others write: its schema guard (``sqlite_schema_guard.py``)
            declare(conn, self._schemas)

    async def close(self) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self._stop_writer)
        unregister(self.health)

    def close_blocking(self) -> None:
        self._stop_writer()
        unregister(self.health)

    # ------------------------------------------------------------------ the interface
    async def query(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        return await self._submit("read", (sql, params))

    async def query_dicts(self, sql: str, params: Params = ()) -> list[dict[str, Any]]:
        return await self._submit("read_dicts", (sql, params))

    def query_blocking(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        return self._submit_blocking("read", (sql, params))

    def write_inline(self, make: Callable[[], list[Statement]]) -> list[WriteResult] | None:
        """``make()``'s statements committed on this thread now, as ``run`` commits them on the writer's, if
        it is idle: their results, durable; None (``make`` not called) if the writer has work, the store is
        degraded, or recent commits here were slow (``InlinePolicy``). For a caller with nothing else to do
        meanwhile (its thread is held for the commit). Raises what ``run`` raises."""
        if not self.health.ok or not self.inline_policy.allows(time.monotonic()) or not self._claim_idle():
            return None
        started = time.monotonic()
        try:
            statements = make()
            if self.options.exclusive and len(statements) == 1 and not statements[0].many:
                value, error = self._commit_statement(statements[0])  # ``_commit_group``'s way, no job
            else:
                answer: list[tuple[Any, BaseException | None]] = []
                self._commit_group([Job("write", statements, lambda v, e: answer.append((v, e)))])
                value, error = answer[0]
        finally:
            self._release_idle()
            ended = time.monotonic()
            off = self.inline_policy.record(ended - started, ended)
            if off:
                log.info("%s store: a commit took %.0f ms; commits stay on the writer thread for %.0f s",
                         self.name, (ended - started) * 1000, off)
        if error is not None:
            raise error
        self.inline_commits += 1
        return value  # type: ignore[no-any-return]

    def query_dicts_blocking(self, sql: str, params: Params = ()) -> list[dict[str, Any]]:
        return self._submit_blocking("read_dicts", (sql, params))

    # ------------------------------------------------------------------ the writer thread
    def _answer(self, loop: asyncio.AbstractEventLoop, fut: "asyncio.Future[Any]") -> Done:
        return resolver(loop, fut, self._settled)

    def _after_run(self) -> None:
        self._hand_over()

    def _drop_hold(self) -> None:
        if self._hold is not None:
            self._hold.close()
            self._hold = None

    def _writer_stopped(self) -> None:
        self._drop_hold()
        _close_quietly(self._conn)
        self._conn = None

    def _hand_over(self) -> None:
        """The answers of the group just run, to their event loops: one ``call_soon_threadsafe`` (one write to
        the loop's wake-up pipe) per loop for the whole group, in the order the jobs ran."""
        if not self._settled:
            return
        settled, self._settled[:] = list(self._settled), []
        by_loop: dict[asyncio.AbstractEventLoop, list[Callable[[], None]]] = {}
        for loop, settle in settled:
            by_loop.setdefault(loop, []).append(settle)
        for loop, settles in by_loop.items():
            try:
                loop.call_soon_threadsafe(settle_all, settles)
            except RuntimeError:  # the loop is closed: nobody waits any more
                pass

    def _ensure_connection(self) -> sqlite3.Connection:
        """The connection, after checking the file is still the one we opened (reopening it if not)."""
        if self._conn is not None:
            try:
                st = os.stat(self._file)
                same = (st.st_dev, st.st_ino) == self._identity
            except OSError:
                same = False
            if same and st.st_size < self._size and (self._wal_mode or not st.st_size):
                # cut in place: the page cache held what the file lost, so commits "succeeded" onto a database
                # no reader could open (shared, cut to nothing: "no such table"). Refused; reopened next write
                cut, self._size = st.st_size, 0
                _close_quietly(self._conn)
                self._conn, self._wal = None, None
                raise StorageError(f"{self.name} store {self.path} was truncated while in use ({cut} bytes "
                                   "left); reopening what it holds on the next write")
            self._size = max(self._size, st.st_size) if same else self._size
            if not same:
                try:
                    self._conn.close()
                except sqlite3.Error:
                    pass
                self._conn = None
                raise StorageError(
                    f"{self.name} store {self.path} was deleted or replaced; re-creating it on the next write"
                )
            moved = self._wal_moved()
            if moved:
                # closing folds what the connection holds into the database file (read through the log it
                # still has open: whole when the log was removed or replaced, refused by SQLite when cut)
                _close_quietly(self._conn)
                self._conn, self._wal = None, None
                raise StorageError(
                    f"{self.name} store {self.path}: its write-ahead log was {moved} while in use, so a "
                    "commit there would not survive a crash; starting a new one on the next write"
                )
        if self._conn is None:
            self._connect()
        assert self._conn is not None
        return self._conn

    def _note_size(self) -> None:
        """After a commit (its checkpoint may have grown the file): the least size the next one expects."""
        if self._hold is not None:
            try:  # not ``contextlib.suppress``: three calls more, twice a call (issue 21)
                self._size = max(self._size, os.fstat(self._hold.fd).st_size)
            except OSError:  # as before: the size the last stat saw
                pass

    def _wal_moved(self) -> str | None:
        """How the write-ahead log is no longer the file we write (removed, replaced, cut), or None. One
        ``lstat`` per commit. The log never shrinks while we hold it (no ``journal_size_limit``: a checkpoint
        rewinds it, never truncates it), so a smaller size is a cut."""
        if not self._wal_mode:
            return None
        try:
            st = os.lstat(self._wal_file)
        except FileNotFoundError:
            return "removed" if self._wal is not None else None
        except OSError:
            return "made unreadable"
        now = (st.st_dev, st.st_ino, st.st_size)
        if self._wal is None:
            self._wal = now  # the log as our first write left it
            return None
        if now[:2] != self._wal[:2]:
            return "replaced"
        if now[2] < self._wal[2]:
            return "truncated"
        self._wal = now
        return None

    def _full(self, e: sqlite3.Error) -> StorageError:
        return StorageError(
            f"{self.name} store {self.path} cannot be written: the disk is full or the file may not grow (a "
            f"file size limit) ({e})"
        )

    def _fault(self, e: BaseException) -> StorageError:
        if isinstance(e, StorageError):
            err = e
        elif isinstance(e, sqlite3.Error) and cannot_grow(e):  # at a commit as at an open: the same words
            err = self._full(e)
        else:
            err = StorageError(f"{self.name} store {self.path}: {e}")
        self.health.degrade(str(err))
        log.warning("storage fault: %s", err)
        return err

    def _commit_group(self, group: list[Job], again: bool = True) -> None:
        if len(group) == 1 and self.options.exclusive:
            statements = list(group[0].payload)
            if len(statements) == 1 and not statements[0].many:
                group[0].done(*self._commit_statement(statements[0]))
                return
            group = [Job(group[0].kind, statements, group[0].done)]
        try:
            conn = self._ensure_connection()
            conn.execute("BEGIN IMMEDIATE")
        except (sqlite3.Error, StorageError) as e:
            err = self._fault(e)
            for job in group:
                job.done(None, err)
            return
        results: list[tuple[Job, Any, BaseException | None]] = []
        # a job alone in its group has the transaction to itself: no savepoint around it (each statement this
        # thread runs hands the interpreter over and back, contended by the event loop under load)
        alone = len(group) == 1
        rolled_back = False
        try:
            for job in group:
                if not alone:
                    conn.execute("SAVEPOINT job")
                try:
                    out = [self._exec(conn, st) for st in job.payload]
                    if not alone:
                        conn.execute("RELEASE job")
                    results.append((job, out, None))
                except Exception as e:  # noqa: BLE001 - a job's own error (constraint, unencodable text)
                    if isinstance(e, sqlite3.Error) and (is_fault(e) or is_stale(e)):
                        raise
                    if alone:
                        if conn.in_transaction:
                            conn.execute("ROLLBACK")
                        rolled_back = True
                    else:
                        conn.execute("ROLLBACK TO job")
                        conn.execute("RELEASE job")
                    results.append((job, None, self._refused(e)))
            if not rolled_back:
                if self._hold is not None:
                    # no checkpoint under a reader's copy
                    self._hold.before_commit(self._wal[2] if self._wal is not None else 0)
                conn.execute("COMMIT")
                self._note_size()
            self.commits += 1
            self.committed_jobs += len(group)
            self._checkpoint_if_due()
        except sqlite3.Error as e:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            if again and is_stale(e):  # nothing written: the schema read anew, the group run once more
                try:
                    self._declare(conn)
                except sqlite3.Error as moved:  # an older gateway's: refused
                    e = moved
                else:
                    self._commit_group(group, again=False)
                    return
            err = self._fault(e)
            for job in group:
                job.done(None, err)
            return
        self.health.recover()
        for job, out, error in results:
            job.done(out, error)

    def _commit_statement(self, st: Statement) -> tuple[Any, BaseException | None]:
        """A group of one job of one statement (an audit batch, a row alone): the statement is its own
        transaction, SQLite's autocommit, without ``BEGIN`` and ``COMMIT`` (two statements fewer, each a
        hand-over of the interpreter to and from the busy event loop; issue 21). The same commit: synced as
        ``COMMIT`` syncs it (``synchronous=FULL``) before the statement returns, and on any error rolled back
        whole by SQLite, as ``ROLLBACK`` would. Only on a file this process alone writes (``exclusive``): a
        statement that reads before it writes could meet another writer's lock mid-way, which ``BEGIN
        IMMEDIATE`` waits for up front. ``executemany`` is left out: there each row commits on its own."""
        conn: sqlite3.Connection | None = None
        try:
            conn = self._ensure_connection()
            if self._hold is not None:
                # no checkpoint under a reader's copy (this statement's commit may run one)
                self._hold.before_commit(self._wal[2] if self._wal is not None else 0)
            out = self._exec(conn, st)
            if conn.in_transaction:  # a statement not run to its end (never ours): its transaction ends here
                conn.execute("COMMIT")
            self._note_size()
        except StorageError as e:
            return None, self._fault(e)
        except Exception as e:  # noqa: BLE001 - a job's own error (constraint, unencodable text) or a fault
            if conn is not None and conn.in_transaction:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            if isinstance(e, sqlite3.Error) and is_fault(e):
                return None, self._fault(e)
            self.commits += 1
            self.committed_jobs += 1
            self.health.recover()
            return None, self._refused(e)
        self.commits += 1
        self.committed_jobs += 1
        self.health.recover()
        self._checkpoint_if_due()
        return [out], None

    def _checkpoint_if_due(self) -> None:
        if self.idle_checkpoint is not None and self.idle_checkpoint.due():
            self._put(Job("call", self._checkpoint, _unheard))

    def _presize(self, conn: sqlite3.Connection) -> None:
        presize_wal(conn, self.path)

    def _checkpoint(self, conn: sqlite3.Connection) -> bool:
        assert self.idle_checkpoint is not None
        return self.idle_checkpoint.run(conn, self._hold, self._wal[2] if self._wal is not None else 0)

    def _refused(self, e: BaseException) -> BaseException:
        return refused(self.name, self.path, e)

    @staticmethod
    def _exec(conn: sqlite3.Connection, st: Statement) -> WriteResult:
        refuse_nan(st.params, st.many)
        if st.many:
            cur = conn.executemany(st.sql, st.params)
            return WriteResult(cur.rowcount, None, [])
        cur = conn.execute(st.sql, st.params)
        rows = cur.fetchall() if cur.description else []
        return WriteResult(cur.rowcount, cur.lastrowid, rows)

    def _run_call(self, job: Job) -> None:
        try:
            conn = self._ensure_connection()
            if job.kind == "read":
                sql, params = job.payload
                refuse_nan(params, False)
                value: Any = conn.execute(sql, params).fetchall()
            elif job.kind == "read_dicts":
                sql, params = job.payload
                refuse_nan(params, False)
                cur = conn.execute(sql, params)
                names = [d[0] for d in cur.description or ()]
                value = [dict(zip(names, row)) for row in cur.fetchall()]
            else:  # "call": a migration or other whole-connection work
                value = job.payload(conn)
        except StorageError as e:
            job.done(None, self._fault(e))
            return
        except sqlite3.Error as e:
            job.done(None, self._fault(e) if is_fault(e) else self._refused(e))
            return
        except BaseException as e:  # noqa: BLE001 - handed to the caller, never kills the writer
            job.done(None, self._refused(e))
            return
        job.done(value, None)


def _unheard(value: Any, error: BaseException | None) -> None:
    """A job nobody waits for (a checkpoint): a fault has degraded the store already (``_run_call``)."""
