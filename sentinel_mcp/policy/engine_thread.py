"""The thread that owns SWI-Prolog, driven from asyncio (``EngineThread``; ``engine.PrologEngine`` adds the
queries and decisions).

pyswip is not thread-safe, and SWI-Prolog can be initialised only once per process, so one dedicated thread
runs every job: a caller submits a function and gets a future back (``submit``), or awaits it on its event
loop, settled there in one hop (``run``).

A small piece of work can also run on the caller's own thread, without the two thread wake-ups of a job
(about 70 us on this machine, more than a guard decision): when nothing is queued or running and the caller's
thread has a SWI-Prolog engine of its own (the thread that imported pyswip initialised Prolog: usually the
main thread, where the event loop runs), ``try_now`` runs it there, holding the lock jobs hold, so Prolog
still runs one call at a time, in the order asked (the per-query state and the rulebases are shared by all
engines), and under a stack limit of that thread's own (``CALLER_STACK_BYTES``: a call that needs more errs
there, and is made again on the engine thread). Only direct calls (``PrologCall``) run there, never pyswip.
(Lending the engine thread's engine to another thread instead, with PL_set_engine, crashes SWI-Prolog 9.0: its
C-stack checks keep the stack of the thread that created the engine.)
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Callable, TypeVar

from sentinel_mcp.core.errors import PolicyError
from sentinel_mcp.policy.core_qlf import LOADER, load_plan, prolog_refused
from sentinel_mcp.policy.prolog_call import PrologCall, PrologCallError, thread_has_engine
from sentinel_mcp.policy.prolog_text import quote_atom
from sentinel_mcp.policy.swipl_location import import_pyswip_core

log = logging.getLogger(__name__)
T = TypeVar("T")
CORE = Path(__file__).with_name("prolog") / "sentinel_core.pl"
# A caller's thread (the event loop's) runs Prolog under this stack limit, its own (the flag is per thread): a
# few inferences may build a term of a gigabyte (length(L, 10000000)), the engine's default bound, and hold
# the loop meanwhile; a pass over it errs and is decided again on the engine thread, as over the inference cap
CALLER_STACK_BYTES = 16 * 1024 * 1024
# The engine thread's own (SWI-Prolog's default is 1 GB, and every decision waits on this thread): a guard
# that builds more errs with resource_error, its call denied for memory, and the thread goes on; loads,
# decisions and proofs need a few MB
ENGINE_STACK_BYTES = 256 * 1024 * 1024
# the engine thread's C stack (virtual memory: only the pages a call reaches are used): what SWI-Prolog checks
# a call's depth against under ``serve``, and room past the process's stack limit otherwise (see begin)
ENGINE_C_STACK_BYTES = 256 * 1024 * 1024
_SN_THREAD_STACK_LIMIT = PrologCall("sentinel_core", "sn_thread_stack_limit", 2)


def thread_stack_limit(limit: int) -> int:
    """Set the calling thread's SWI-Prolog stack limit (bytes; it must have an engine); the limit it had."""
    return int(_SN_THREAD_STACK_LIMIT(int(limit)))


def _load_core_goal() -> tuple[str, list[str]]:
    """The core loaded into ``user``: from its .qlf when they are the ones built (core_qlf.py); how it was
    loaded is the goal's ``How``. And the plan's version, as a child is given it (``prolog_refused``)."""
    files, version = load_plan(CORE.parent)
    listed = ", ".join(quote_atom(f) for f in files)
    return (f"use_module({quote_atom(str(CORE.with_name(LOADER)))}, []), "
            f"core_files:load_core(user:[{listed}], {version}, How)"), [str(version)]


class EngineError(PolicyError):
    """A query the engine could not run (a bug or a malformed request, never a policy outcome)."""


class EngineThread:
    def __init__(self) -> None:
        # a job's answer goes to a concurrent Future (submit) or straight to an event loop (run)
        self._jobs: queue.SimpleQueue[tuple[Callable[[Any], Any], Any] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._start_error: BaseException | None = None
        self._lock = threading.Lock()
        # whoever holds _use runs Prolog: the engine thread for a job, or a caller on its own thread (try_now)
        self._use = threading.Lock()
        self._waiting = 0  # jobs queued or running: a caller may not go before them
        self._count = threading.Lock()
        self._has_engine = threading.local()  # per thread: whether it has a SWI-Prolog engine of its own
        self._stopped = False  # at exit: nothing more runs on a caller's thread either

    # ---------------------------------------------------------------- thread
    def start(self) -> None:
        """The engine thread, started once; every caller waits for it to be ready and gets its start error
        (a caller after a failed start returned at once before, then queued a job no thread would run)."""
        self.begin()
        self._ready.wait()
        if self._start_error is not None:
            raise EngineError(f"cannot start SWI-Prolog: {self._start_error}")

    def begin(self) -> None:
        """The engine thread started, not waited for: the core module's load (SWI-Prolog itself was started
        by ``shared_engine``, on its caller's thread) runs in foreign code, the interpreter let go, beside
        what the caller does next (``serve`` imports the SDK meanwhile). ``start`` and the first job wait
        for it and get its start error, as before."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="sentinel-prolog", daemon=True)
                # Its C stack is how deep a term may nest (f(f(...)) 300,000 levels, in a proof being
                # written) before the writer errs. Under ``serve`` (every ``shared_engine()``) SWI-Prolog
                # is initialised on the caller's thread (``import_pyswip_core``), and this thread, attached
                # to it, is checked against its own size: this one (test_engine_c_stack). Were it
                # initialised on this thread (nothing imported pyswip before), SWI-Prolog would take it for
                # the process's main thread and check it against the process's stack limit (ulimit -s,
                # 8 MB) from where it starts, while a thread of that size overran before the check caught
                # it (SIGSEGV): this size leaves room past that limit too.
                previous = threading.stack_size(ENGINE_C_STACK_BYTES)
                try:
                    self._thread.start()
                finally:
                    threading.stack_size(previous)

    def _run(self) -> None:
        try:
            import_pyswip_core()  # SWI-Prolog's location, when kept, told to pyswip (swipl_location.py)
            from pyswip import Prolog

            prolog = Prolog()
            goal, planned = _load_core_goal()
            # a .qlf refused on the Prolog side is counted, as the children's are (core_qlf.py)
            prolog_refused(planned, str(list(prolog.query(goal))[0]["How"]))
            thread_stack_limit(ENGINE_STACK_BYTES)
        except BaseException as e:  # reported to start()
            self._start_error = e
            self._ready.set()
            return
        self._ready.set()
        while True:
            job = self._jobs.get()
            try:
                with self._use:
                    if job is None:
                        self._detach()
                        return
                    settle = self._one(prolog, *job)
            finally:
                with self._count:
                    self._waiting -= 1
            # settled once the engine is free: the caller may decide on its own thread at once (try_now)
            try:
                settle()
            except Exception:  # noqa: BLE001 - the engine thread goes on whatever a future does
                log.exception("settling a Prolog job")

    @staticmethod
    def _one(prolog: Any, fn: Callable[[Any], Any], fut: Any) -> Callable[[], None]:
        """Run a job; returns what settles its future."""
        if isinstance(fut, tuple):  # from run(): settled on its event loop, one hop, no future chaining
            loop, settle, waiter = fut
            if waiter.done():  # the caller was cancelled before the job started
                return _nothing
            try:
                ok, value = True, fn(prolog)
            except BaseException as e:
                ok, value = False, e
            return lambda: settle_soon_with(loop, settle, waiter, ok, value)
        if not fut.set_running_or_notify_cancel():
            return _nothing
        try:
            value = fn(prolog)
        except BaseException as e:  # noqa: BLE001 - the job's caller gets it
            error = e  # (the name ``e`` is unbound after the except clause)
            return lambda: fut.set_exception(error)
        return lambda: fut.set_result(value)

    def _put(self, job: tuple[Callable[[Any], Any], Any] | None) -> None:
        with self._count:
            self._waiting += 1
        self._jobs.put(job)

    def try_now(self, fn: Callable[[Any], T]) -> tuple[bool, T | None]:
        """Run ``fn`` (direct calls only: it gets no pyswip handle) on the calling thread's own engine, if the
        thread has one, no job runs and none waits (a job put earlier runs first); (False, None) otherwise,
        and the caller submits a job instead. ``fn``'s exception is raised."""
        return self.try_call(fn, None)

    def try_call(self, fn: Callable[..., T], *args: Any) -> tuple[bool, T | None]:
        """``try_now`` of ``fn(*args)`` (a direct call given its arguments: no closure made and called per
        decision)."""
        if not self._ready.is_set() or self._start_error is not None:
            self.start()
        if self._waiting or self._stopped:
            return False, None
        try:  # the thread's answer once known: an attribute read, not two calls a decision
            has = self._has_engine.value
        except AttributeError:
            has = self._thread_has_engine()
        if not has:
            return False, None
        if not self._use.acquire(blocking=False):
            return False, None
        try:
            if self._waiting or self._stopped:
                return False, None
            if has is _UNBOUNDED:  # its first call here: bounded first (CALLER_STACK_BYTES), or not run here
                try:
                    thread_stack_limit(CALLER_STACK_BYTES)
                except PrologCallError:
                    log.exception("cannot bound a caller's Prolog stacks: its calls go to the engine thread")
                    self._has_engine.value = False
                    return False, None
                self._has_engine.value = True
            return True, fn(*args)
        finally:
            self._use.release()

    def _thread_has_engine(self) -> Any:
        """False; for a thread with an engine of its own, _UNBOUNDED until try_call set its stack limit."""
        has = getattr(self._has_engine, "value", None)
        if has is None:
            has = threading.current_thread() is not self._thread and thread_has_engine() and _UNBOUNDED
            self._has_engine.value = has
        return has

    @staticmethod
    def _detach() -> None:
        # an attached thread still alive at exit makes SWI-Prolog print "Failed to stop Prolog threads"
        try:
            from pyswip.core import _lib

            _lib.PL_thread_destroy_engine()
        except Exception:  # noqa: BLE001 - cosmetic only
            pass

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the engine thread (at process exit; the engine cannot be started again afterwards)."""
        self._stopped = True
        if self._thread is not None and self._thread.is_alive():
            self._put(None)
            self._thread.join(timeout)

    def submit(self, fn: Callable[[Any], T]) -> Future[T]:
        if not self._ready.is_set() or self._start_error is not None:  # the lock only until it runs
            self.start()
        fut: Future[T] = Future()
        self._put((fn, fut))
        return fut

    async def run(self, fn: Callable[[Any], T]) -> T:
        if not self._ready.is_set() or self._start_error is not None:
            self.start()
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[T] = loop.create_future()
        self._put((fn, (loop, _settle, waiter)))
        return await waiter

    def run_sync(self, fn: Callable[[Any], T], timeout: float | None = 60.0) -> T:
        return self.submit(fn).result(timeout)


_UNBOUNDED = "unbounded"  # _has_engine's value for a thread with an engine whose stack limit is not set yet


def _nothing() -> None:
    pass


def settle_soon_with(
    loop: asyncio.AbstractEventLoop, settle: Callable[..., None], waiter: Any, ok: bool, value: Any
) -> None:
    try:
        loop.call_soon_threadsafe(settle, waiter, ok, value)
    except RuntimeError:  # its loop is closed: nobody waits any more
        pass


def settle_soon(loop: asyncio.AbstractEventLoop, fut: asyncio.Future[Any], ok: bool, value: Any) -> None:
    """Settle an event loop's future from the engine thread."""
    try:
        loop.call_soon_threadsafe(_settle, fut, ok, value)
    except RuntimeError:  # its loop is closed: nobody waits any more
        pass


def _settle(waiter: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if not waiter.done():
        (waiter.set_result if ok else waiter.set_exception)(value)
