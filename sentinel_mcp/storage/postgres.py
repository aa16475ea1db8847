"""PostgreSQL behind the storage seam: what several replicas share (psycopg 3, group commit, fail closed).

The shape mirrors ``sqlite.py`` so stores cannot tell them apart:

- One writer thread per database owns one connection and commits everything queued at that moment in ONE
  transaction (each job in its own SAVEPOINT, so a job's constraint error fails that job alone). With
  ``synchronous_commit=on`` every write is durable on the server when it returns, and N concurrent writers
  share one WAL flush. ``consume`` is a write whose rows only one transaction in the cluster can get
  (``DELETE/UPDATE ... RETURNING`` takes the row lock; a racing replica finds the row gone after our commit).
- Reads use a small pool of autocommit connections (``psycopg_pool``) (a few threads): never behind a commit.
- A connection that breaks (server stopped, restarted, read-only, network) degrades ``health`` with the cause
  and fails the jobs it carried (callers fail closed); the next job reconnects, so the replica recovers by
  itself when the server is back.
- Why psycopg 3 and not asyncpg (``benchmarks/storage_backends.py``, one run on the loaded 2-core machine):
  asyncpg is faster per bare round trip (217 vs 349 µs for ``SELECT 1``), but a durable write is dominated by
  the server's WAL flush (psycopg 1.6 ms, asyncpg 3.0 ms per INSERT+COMMIT in that run: noise), and group
  commit divides that among concurrent writers. The seam has blocking callers (sensors, the CLI, the nonce
  book) as well as async ones; a thread-owned psycopg connection serves both with one code path, where
  asyncpg would need its own event loop for every blocking caller.

SQL is written once: ``?`` placeholders become ``%s`` here. The password never appears in an error or log
line: every driver message passes through ``ServerLocation.scrub``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import random
import time
import weakref
from typing import Any, Callable, TypeVar

from sentinel_mcp.storage.commit_wait import CommitUnconfirmed, CommitWatch
from sentinel_mcp.storage.database import Params, Statement, StorageError, WriteResult
from sentinel_mcp.storage.health import StoreHealth, register, unregister
from sentinel_mcp.storage.job_writer import Done, Job, JobWriter
from sentinel_mcp.storage.location import ServerLocation
from sentinel_mcp.storage.row_bytes import bounded_write
from sentinel_mcp.storage.statement_refusal import refused
from sentinel_mcp.storage.schema import Schema
from sentinel_mcp.storage.search_path import pin
from sentinel_mcp.storage.server_session import session_settings
from sentinel_mcp.storage.server_connection import GONE, TOLD, heard, resolver, translate
from sentinel_mcp.storage.server_driver import is_fault, psycopg_driver
from sentinel_mcp.storage.server_reads import PooledReads
from sentinel_mcp.storage.server_schema import (
    BACKEND,
    CHANNEL,
    SchemaMoved,
    apply_schema,
    declare,
    guard_tables,
    is_stale,
    redeclare,
)
from sentinel_mcp.storage.server_serving import version_table
from sentinel_mcp.storage.server_trial import ServerTrial

log = logging.getLogger(__name__)

READERS = 4
CONNECT_TIMEOUT = 3  # seconds: a replica whose server is gone answers "degraded" quickly, not after minutes
# seconds a statement may run (waiting on a lock included) before the server cancels it: a table locked by
# another session (an operator's, a stuck client's) must refuse this replica's calls (fail closed, degraded),
# not hold its one writer thread, and every call behind it, for as long as the lock is held
STATEMENT_TIMEOUT = 15.0  # ``sentinel.cluster.commit_wait_seconds`` (``set_statement_bound``)
_RETRIES = 3  # a group chosen as a deadlock victim (replicas locking rows in different orders) is re-run
_T = TypeVar("_T")


def set_statement_bound(seconds: float) -> None:
    """The process's bound on a statement and on a commit's wait (the config's, checked in range there): for
    connections opened and commits made from now on."""
    global STATEMENT_TIMEOUT
    STATEMENT_TIMEOUT = float(seconds)


class PostgresDatabase(JobWriter, PooledReads):
    """``storage.Database`` on PostgreSQL: writes on the writer thread (``job_writer.py``), reads pooled."""

    backend = BACKEND
    multi_row_values = False  # storage.Database: a VALUES list's columns are typed on their own here

    def __init__(self, location: ServerLocation, name: str) -> None:
        self.location = location
        self.path = location.redacted  # what callers show; never the DSN
        self.name = name
        self._commits = CommitWatch(f"{name} store {location.redacted}")  # commit_wait.py
        self.health = StoreHealth(name)
        self._schemas: list[Schema] = []
        self._conn: Any = None
        self._pool: Any = None
        self._readers = concurrent.futures.ThreadPoolExecutor(READERS, thread_name_prefix=f"pg-read:{name}")
        self.commits = 0
        self.committed_jobs = 0
        self._committing = False  # the writer thread's own: whether the group's COMMIT has been sent
        self._trial = ServerTrial(2 * CONNECT_TIMEOUT)  # degraded: one connection at a time tries the server
        self._pool_doubtful = False  # a fault since the pool last served a read (``_read_pooled``)
        self._told: weakref.WeakSet[Any] = weakref.WeakSet()  # readers told of a migration (``_recheck``)
        self._moved: str | None = None  # why this replica's schema is older than the database's, once found
        self._migrates = True  # whether this connection's role migrates (owns the schema) or only serves

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> "PostgresDatabase":
        from psycopg_pool import ConnectionPool

        psycopg_driver()
        self._pool = ConnectionPool(
            self.location.dsn,
            min_size=0,
            max_size=READERS,
            open=True,
            timeout=CONNECT_TIMEOUT,
            kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT},
            configure=self._configure,
            name=f"sentinel-{self.name}",
        )
        self._start_writer()
        register(self.health)
        return self

    def _fresh_connection(self) -> Any:
        """A new autocommit connection, not yet configured: the writer's (``_connect``) and a direct read's
        (``server_reads.py``), within this module's ``CONNECT_TIMEOUT``."""
        return psycopg_driver().connect(self.location.dsn, autocommit=True, connect_timeout=CONNECT_TIMEOUT)

    def _connect(self) -> Any:
        psycopg = psycopg_driver()
        try:
            conn = self._fresh_connection()
        except psycopg.Error as e:
            raise StorageError(self._say(e)) from None
        try:
            pin(conn, self.location.dsn)  # before any name is resolved on it
            session_settings(conn, STATEMENT_TIMEOUT)  # the set-up's own statements too (migrations lift it)
            self._migrates = version_table(conn)  # a serving role sends no DDL (``server_serving.py``)
            for schema in self._schemas:
                self._apply(conn, schema)
            self._declare(conn)
        except BaseException as e:
            conn.close()
            if isinstance(e, psycopg.Error):
                raise StorageError(self._say(e)) from None
            raise
        conn.autocommit = False
        return conn

    def _configure(self, conn: Any) -> None:
        """A new reading connection: the checked search path, bounded statements, the schema checked."""
        pin(conn, self.location.dsn)
        session_settings(conn, STATEMENT_TIMEOUT)
        self._declared(lambda: declare(conn, self._schemas))
        conn.execute(f"LISTEN {CHANNEL}")
        conn.add_notify_handler(lambda _n: self._told.add(conn))

    def _recheck(self, conn: Any) -> bool:
        """A pooled reader about to serve: told of a migration (a notice on its socket, or read during its
        last statement), its schema checked again on it (one round trip, only then). False: closed by the
        server."""
        said = heard(conn)
        if said == GONE:
            return False
        if said == TOLD or conn in self._told:
            self._told.discard(conn)
            self._declared(lambda: declare(conn, self._schemas))
        return True

    def _declare(self, conn: Any, listen: bool = True) -> None:
        """The writer's connection: the guard on our tables, the schema declared, the notices listened to."""
        guard_tables(conn, lambda: self._commits.bounded(conn, STATEMENT_TIMEOUT))
        self._declared(lambda: declare(conn, self._schemas))
        if listen:
            conn.execute(f"LISTEN {CHANNEL}")

    def _declared(self, run: Callable[[], _T]) -> _T:
        """A schema check whose refusal (a newer schema) is kept: an older Sentinel does not become newer."""
        try:
            return run()
        except SchemaMoved as e:
            self._moved = str(e)
            raise

    def _say(self, e: BaseException) -> str:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return self.location.scrub(f"{self.name} store {self.location.redacted}: {first}")

    def _refused(self, e: BaseException) -> BaseException:
        """A statement's own error (a value its column cannot hold, a constraint) as the caller hears it: a
        StorageError (every caller fails closed on one), never the driver's or the codec's exception. The
        driver's words may quote the client's value: shown safely."""
        return refused(self.name, self.location.redacted, e, self.location.scrub)

    def _apply(self, conn: Any, schema: Schema) -> int:
        return self._declared(lambda: apply_schema(conn, schema, self._migrates))

    async def migrate(self, schema: Schema) -> None:
        schema.steps(BACKEND)  # a store without a schema for this backend cannot live here: say so now
        if all(s.store != schema.store for s in self._schemas):
            self._schemas.append(schema)
        await self._submit("call", lambda conn: self._apply_committed(conn, schema))

    def migrate_blocking(self, schema: Schema) -> None:
        schema.steps(BACKEND)
        if all(s.store != schema.store for s in self._schemas):
            self._schemas.append(schema)
        self._submit_blocking("call", lambda conn: self._apply_committed(conn, schema))

    def _apply_committed(self, conn: Any, schema: Schema) -> None:
        conn.autocommit = True
        try:
            if self._apply(conn, schema):  # this replica's own migration moved the counter: declared again
                self._declare(conn, listen=False)
        finally:
            conn.autocommit = False

    async def close(self) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self.close_blocking)

    def close_blocking(self) -> None:
        self._stop_writer()
        self._commits.close()
        self._readers.shutdown(wait=True)
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        unregister(self.health)

    # ------------------------------------------------------------------ the interface
    async def query(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        return await self._read_async(sql, params, dicts=False)

    async def query_dicts(self, sql: str, params: Params = ()) -> list[dict[str, Any]]:
        return await self._read_async(sql, params, dicts=True)

    def query_blocking(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        return self._read(sql, params, False)

    def write_inline(self, make: Callable[[], list[Statement]]) -> list[WriteResult] | None:
        """Never: a commit here is a round trip to the server, which the caller's thread must not wait on."""
        return None

    def query_dicts_blocking(self, sql: str, params: Params = ()) -> list[dict[str, Any]]:
        return self._read(sql, params, True)

    # ------------------------------------------------------------------ writes (one thread, group commit)
    def _answer(self, loop: asyncio.AbstractEventLoop, fut: "asyncio.Future[Any]") -> Done:
        return resolver(loop, fut)

    def _writer_error(self, e: BaseException) -> StorageError:
        return StorageError(self._say(e))

    def _writer_stopped(self) -> None:
        self._drop_connection()

    def _drop_connection(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:  # noqa: BLE001 - already broken
                pass
            self._conn = None

    def _connection(self) -> Any:
        if self._moved is not None:
            raise StorageError(self._moved)
        said = heard(self._conn) if self._conn is not None else None
        if self._conn is not None and (self._conn.closed or self._conn.broken or said == GONE):
            self._drop_connection()
        elif said == TOLD:  # a migration's notice (or anyone's NOTIFY): checked and declared again, in place
            conn = self._conn
            try:
                self._declared(lambda: redeclare(conn, self._schemas))
            except SchemaMoved:
                self._drop_connection()
                raise
            except psycopg_driver().Error:
                self._drop_connection()  # the check's own fault: a fresh connection decides
        if self._conn is None:
            self._conn = self._connect()
        return self._conn

    def _fault(self, e: BaseException) -> StorageError:
        err = e if isinstance(e, StorageError) else StorageError(self._say(e))
        self.health.degrade(str(err))
        log.warning("storage fault: %s", err)
        return err

    def _run_call(self, job: Job) -> None:
        psycopg = psycopg_driver()
        try:
            value = job.payload(self._connection())
        except StorageError as e:
            job.done(None, self._fault(e))
            return
        except psycopg.Error as e:
            if is_fault(e):
                self._drop_connection()
            job.done(None, self._fault(e) if is_fault(e) else self._refused(e))
            return
        except Exception as e:  # noqa: BLE001 - the job's own error: the caller hears a StorageError
            job.done(None, self._refused(e))
            return
        except BaseException as e:  # noqa: BLE001
            job.done(None, e)
            return
        job.done(value, None)

    def _commit_group(self, group: list[Job]) -> None:
        psycopg = psycopg_driver()
        fresh_retry = True  # one re-run on a new connection when a stale one failed before COMMIT was sent
        redeclared = False  # one re-run on a new connection when the schema guard refused (nothing written)
        for attempt in range(_RETRIES):
            try:
                reused = self._conn is not None
                conn = self._connection()
                self._committing = False
                results = self._transaction(conn, group)
            except StorageError as e:
                if isinstance(e, CommitUnconfirmed):
                    self._drop_connection()  # cancelled mid-commit: start clean
                err = self._fault(e)
                break
            except psycopg.Error as e:
                try:
                    if not (self._conn is None or self._conn.closed):
                        self._conn.rollback()
                except psycopg.Error:
                    pass
                if is_stale(e) and not redeclared and attempt + 1 < _RETRIES:
                    # the guard refused before any row was touched: the new connection re-reads the schema
                    # (an older replica is refused there, ``_connect``; a current one declares and goes on)
                    redeclared = True
                    self._drop_connection()
                    continue
                if reused and fresh_retry and not self._committing and is_fault(e) and attempt + 1 < _RETRIES:
                    # the connection died while idle (a server restart): the server rolled the transaction
                    # back with it, so nothing of this group was committed and running it again is safe. A
                    # fault at COMMIT is never re-run (it may have committed): those jobs fail closed.
                    fresh_retry = False
                    self._drop_connection()
                    continue
                if isinstance(e, (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure)):
                    if attempt + 1 < _RETRIES:
                        time.sleep(random.uniform(0.001, 0.005) * (attempt + 1))  # jitter: racers drift apart
                        continue
                    if (
                        len(group) > 1
                    ):  # still a victim: each job alone (one job's rows cannot form the cycle)
                        for job in group:
                            self._commit_group([job])
                        return
                self._drop_connection()  # whatever the state of that connection, start clean
                err = self._fault(e)
                break
            self.commits += 1
            self.committed_jobs += len(group)
            self.health.recover()
            for job, out, error in results:
                job.done(out, error)
            return
        for job in group:
            job.done(None, err)

    def _transaction(self, conn: Any, group: list[Job]) -> list[tuple[Job, Any, BaseException | None]]:
        psycopg = psycopg_driver()
        if len(group) == 1:  # alone in its transaction: its own error rolls it back, no savepoint round trips
            return self._alone(conn, group[0])
        results: list[tuple[Job, Any, BaseException | None]] = []
        for job in group:
            conn.execute("SAVEPOINT job")
            try:
                out = [self._exec(conn, st) for st in job.payload]
                conn.execute("RELEASE SAVEPOINT job")
                results.append((job, out, None))
            except psycopg.Error as e:
                if is_fault(e) or is_stale(e) or isinstance(
                    e, (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure)
                ):
                    raise
                conn.execute("ROLLBACK TO SAVEPOINT job")
                conn.execute("RELEASE SAVEPOINT job")
                results.append((job, None, self._refused(e)))
            except Exception as e:  # noqa: BLE001 - a job's own error (unencodable value)
                conn.execute("ROLLBACK TO SAVEPOINT job")
                conn.execute("RELEASE SAVEPOINT job")
                results.append((job, None, self._refused(e)))
        self._committing = True
        with self._commits.bounded(conn, STATEMENT_TIMEOUT):
            conn.commit()
        return results

    def _alone(self, conn: Any, job: Job) -> list[tuple[Job, Any, BaseException | None]]:
        psycopg = psycopg_driver()
        statements = list(job.payload)
        if len(statements) == 1 and not statements[0].many:
            return self._one_statement(conn, job, statements[0])
        try:
            out = [self._exec(conn, st) for st in statements]
        except psycopg.Error as e:
            if is_fault(e) or is_stale(e) or isinstance(
                e, (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure)
            ):
                raise
            conn.rollback()
            return [(job, None, self._refused(e))]
        except Exception as e:  # noqa: BLE001 - a job's own error (unencodable value)
            conn.rollback()
            return [(job, None, self._refused(e))]
        self._committing = True
        with self._commits.bounded(conn, STATEMENT_TIMEOUT):
            conn.commit()
        return [(job, out, None)]

    def _one_statement(
        self, conn: Any, job: Job, st: Statement
    ) -> list[tuple[Job, Any, BaseException | None]]:
        """A job of one statement alone: its own transaction (autocommit), one round trip instead of three
        (BEGIN, it, COMMIT; an audit row alone, issue 21). A statement is atomic: it fails whole, and it is
        durable when its answer comes (the server commits before it answers). Sent, it may have committed
        whatever happens next: a fault is never re-run (``_committing``); a connection the server closed
        while it was idle is found before (``heard``)."""
        psycopg = psycopg_driver()
        conn.autocommit = True
        self._committing = True
        try:
            # the statement's own bound, then its commit's
            with self._commits.bounded(conn, 2 * STATEMENT_TIMEOUT):
                out = [self._exec(conn, st)]
        except CommitUnconfirmed:
            raise
        except psycopg.Error as e:
            if is_fault(e) or is_stale(e) or isinstance(
                e, (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure)
            ):
                raise
            return [(job, None, self._refused(e))]
        except Exception as e:  # noqa: BLE001 - a job's own error (unencodable value): nothing was sent
            return [(job, None, self._refused(e))]
        finally:
            if not (conn.closed or conn.broken):
                conn.autocommit = False
        return [(job, out, None)]

    @staticmethod
    def _exec(conn: Any, st: Statement) -> WriteResult:
        sql = bounded_write(translate(st.sql), st.params, st.many)  # ``row_bytes.py``
        with conn.cursor() as cur:
            if st.many:
                rows = [tuple(p) for p in st.params]
                if rows:
                    cur.executemany(sql, rows)
                return WriteResult(cur.rowcount if rows else 0, None, [])
            cur.execute(sql, tuple(st.params))
            out = cur.fetchall() if cur.description else []
            return WriteResult(cur.rowcount, None, out)
