"""The writer thread both backends share (``sqlite.py``, ``postgres.py``): one queue of jobs, one thread.

It takes everything queued at that moment (at most ``MAX_GROUP`` jobs), commits consecutive writes in ONE
transaction (group commit: N concurrent writers share one durable flush) and runs any other job alone, in
order. Every caller is answered, whatever happens to the thread's own code: an async caller on its event loop
(how is the backend's: ``_answer``), a blocking caller on a future. What a group or a call does is the
backend's (``_commit_group``, ``_run_call``); a store that is closed refuses at once.

The writer also knows when it is idle (no job queued or running): a backend may then let a caller use the
connection on its own thread (``_claim_idle``), for a write whose wait for the writer's wake-ups would cost
more than the write itself (``SQLiteDatabase.write_inline``). A job queued meanwhile waits for it: the
connection is held by one thread at a time (``_conn_lock``), and order is kept (the claim was first).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import queue
import threading
from typing import Any, Callable, Iterable, Sequence

from sentinel_mcp.core.running_loop import running_loop
from sentinel_mcp.storage.database import Params, Statement, StorageError, WriteResult

log = logging.getLogger(__name__)

MAX_GROUP = 512  # jobs per commit; bounds the time one commit holds the writer
Done = Callable[[Any, BaseException | None], None]  # how a job's caller hears its value or error
PROBE = (
    "INSERT INTO storage_schema (store, version) VALUES ('$probe', 0) "
    "ON CONFLICT (store) DO UPDATE SET version = storage_schema.version + 1"
)


class Job:
    __slots__ = ("kind", "payload", "done")

    def __init__(self, kind: str, payload: Any, done: Done) -> None:
        self.kind, self.payload, self.done = kind, payload, done


class JobWriter:
    """The writes of ``storage.Database`` over one writer thread. A backend calls ``_start_writer`` when it
    starts and ``_stop_writer`` when it closes, and provides the hooks below."""

    name: str
    _thread: threading.Thread | None = None  # None: not started, or closed (every job is then refused)

    def _start_writer(self) -> None:
        self._jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._conn_lock = threading.Lock()  # held by whichever thread uses the connection
        self._count_lock = threading.Lock()
        self._queued = 0  # jobs put and not yet run to their end (under _count_lock)
        self._closing = False
        self._thread = threading.Thread(target=self._loop, name=f"storage:{self.name}", daemon=True)
        self._thread.start()

    def _stop_writer(self) -> None:
        """Let the queued jobs run, then end the thread (blocking)."""
        if self._thread is not None:
            with self._count_lock:
                self._closing = True  # no caller takes the connection any more (the writer closes it)
            self._jobs.put(None)
            self._thread.join()
            self._thread = None

    # ------------------------------------------------------------------ hooks of the backend
    def _answer(self, loop: asyncio.AbstractEventLoop, fut: "asyncio.Future[Any]") -> Done:
        """How the writer thread settles an async caller's future."""
        raise NotImplementedError

    def _commit_group(self, group: list[Job]) -> None:
        """Consecutive write jobs in one transaction; each job's ``done`` told its own outcome."""
        raise NotImplementedError

    def _run_call(self, job: Job) -> None:
        """Any other job (a read, a migration) alone."""
        raise NotImplementedError

    def _writer_error(self, e: BaseException) -> StorageError:
        """What the callers of a group hear when the writer's own code failed."""
        return StorageError(f"{self.name} store: {type(e).__name__}: {e}")

    def _after_run(self) -> None:
        """After each group or call (the answers of a group may be handed over together here)."""

    def _writer_stopped(self) -> None:
        """On the writer thread, once it has run its last job (close its connection)."""

    # ------------------------------------------------------------------ the writes of the interface
    async def write(self, sql: str, params: Params = ()) -> WriteResult:
        return (await self._submit("write", [Statement(sql, params)]))[0]

    async def run(self, statements: Sequence[Statement]) -> list[WriteResult]:
        return await self._submit("write", list(statements))

    async def consume(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        return (await self._submit("write", [Statement(sql, params)]))[0].rows

    def submit_write(self, statements: Sequence[Statement]) -> "asyncio.Future[list[WriteResult]]":
        """Queue a write and return its future at once (the caller awaits it when it must be durable)."""
        return self._submit("write", list(statements))

    def submit_open(self, statements: Iterable[Statement], answer: Any) -> None:
        """Queue a write whose statements the writer reads only when it runs the job (iterating them there,
        on its thread, once): a batch may still take rows until then (``gateway/audit_batch.py``).
        ``answer`` is settled as a caller's future is (``done``, ``set_result``, ``set_exception``, on this
        event loop's thread): one that answers many callers, each of whom may give up on their own."""
        if self._thread is None:
            raise StorageError(f"{self.name} store is closed")
        self._put(Job("write", statements, self._answer(running_loop(), answer)))

    async def probe(self) -> bool:
        """Try a tiny durable write; health follows the answer (how a degraded store notices recovery)."""
        try:
            await self._submit("write", [Statement(PROBE)])
            return True
        except StorageError:
            return False

    def write_blocking(self, sql: str, params: Params = ()) -> WriteResult:
        return self._submit_blocking("write", [Statement(sql, params)])[0]

    def run_blocking(self, statements: Sequence[Statement]) -> list[WriteResult]:
        return self._submit_blocking("write", list(statements))

    def consume_blocking(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        return self._submit_blocking("write", [Statement(sql, params)])[0].rows

    # ------------------------------------------------------------------ the queue
    def _submit(self, kind: str, payload: Any) -> "asyncio.Future[Any]":
        if self._thread is None:
            raise StorageError(f"{self.name} store is closed")
        loop = running_loop()
        fut: asyncio.Future[Any] = loop.create_future()
        self._put(Job(kind, payload, self._answer(loop, fut)))
        return fut

    def _submit_blocking(self, kind: str, payload: Any) -> Any:
        if self._thread is None:
            raise StorageError(f"{self.name} store is closed")
        fut: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def done(value: Any, error: BaseException | None) -> None:
            fut.set_exception(error) if error is not None else fut.set_result(value)

        self._put(Job(kind, payload, done))
        return fut.result()

    def _put(self, job: Job) -> None:
        with self._count_lock:
            self._queued += 1
        self._jobs.put(job)

    def _claim_idle(self) -> bool:
        """Take the connection for the calling thread if the writer has no job queued or running (then
        ``_release_idle`` when done); False, at once, otherwise."""
        with self._count_lock:
            return (self._thread is not None and not self._closing and not self._queued
                    and self._conn_lock.acquire(blocking=False))

    def _release_idle(self) -> None:
        self._conn_lock.release()

    def _loop(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                break
            batch, stop = [job], False
            while len(batch) < MAX_GROUP:
                try:
                    nxt = self._jobs.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    stop = True
                    break
                batch.append(nxt)
            i = 0
            while i < len(batch):  # consecutive writes share one commit; order is kept
                j = i + 1
                if batch[i].kind == "write":
                    while j < len(batch) and batch[j].kind == "write":
                        j += 1
                try:
                    with self._conn_lock:
                        if batch[i].kind == "write":
                            self._commit_group(batch[i:j])
                        else:
                            self._run_call(batch[i])
                except BaseException as e:  # noqa: BLE001 - the writer never dies; its callers hear why
                    log.exception("storage writer %s: unexpected error", self.name)
                    for one in batch[i:j]:
                        one.done(None, self._writer_error(e))
                with self._count_lock:  # before the answers go: a caller they wake finds the writer idle
                    self._queued -= j - i
                self._after_run()
                i = j
            if stop:
                break
        self._after_run()
        with self._conn_lock:
            self._writer_stopped()
