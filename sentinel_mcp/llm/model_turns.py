"""Turns on the model: one generation holds it at a time, callers wait in FIFO order, cancellable.

Waiting happens on the event loop (FIFO, cancellable, no worker thread parked per waiter); the
turn's holder runs in one worker thread and releases the lock there when llama.cpp is done. A caller
cancelled while its generation runs sets the job's flag (read once per token) and is held until the
model is free again, so a cancelled call leaves nothing running.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import anyio

from sentinel_mcp.llm.errors import GenerationCancelled

_T = TypeVar("_T")
LOCK_POLL_SECONDS = 0.05
CANCEL_GRACE_SECONDS = 60.0


@dataclass
class _Job:
    cancel: threading.Event = field(default_factory=threading.Event)
    finished: threading.Event = field(default_factory=threading.Event)
    tokens: int = 0
    started_at: float = 0.0
    first_token_at: float | None = None
    _state: threading.Lock = field(default_factory=threading.Lock)
    _entered: bool = False
    _abandoned: bool = False

    def enter(self) -> bool:
        """Called by the worker: False if the caller gave up before the worker started."""
        with self._state:
            if self._abandoned:
                return False
            self._entered = True
            return True

    def abandon_if_not_started(self) -> bool:
        with self._state:
            if self._entered:
                return False
            self._abandoned = True
            return True


class ModelTurns:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._current: _Job | None = None  # the generation holding the model, if any
        self._queue: deque[object] = deque()  # FIFO of callers waiting for the model
        self._queue_lock = threading.Lock()

    @property
    def tokens_in_flight(self) -> int | None:
        """Tokens sampled so far by the running generation; None when the model is idle."""
        job = self._current
        return job.tokens if job is not None else None

    def _try_take_turn(self, ticket: object) -> bool:
        with self._queue_lock:
            if self._queue and self._queue[0] is ticket and self._lock.acquire(blocking=False):
                self._queue.popleft()
                return True
            return False

    def _leave_queue(self, ticket: object) -> None:
        with self._queue_lock:
            if ticket in self._queue:
                self._queue.remove(ticket)

    async def _wait_turn(self) -> None:
        ticket = object()
        with self._queue_lock:
            self._queue.append(ticket)
        try:
            while not self._try_take_turn(ticket):
                await anyio.sleep(LOCK_POLL_SECONDS)
        except BaseException:
            self._leave_queue(ticket)
            raise

    def _wait_turn_blocking(self, job: _Job) -> None:
        ticket = object()
        with self._queue_lock:
            self._queue.append(ticket)
        try:
            while not self._try_take_turn(ticket):
                if job.cancel.is_set():
                    raise GenerationCancelled("cancelled while waiting for the model")
                time.sleep(LOCK_POLL_SECONDS)
        except BaseException:
            self._leave_queue(ticket)
            raise

    async def _in_turn(self, fn: Callable[[], _T], job: _Job) -> _T:
        """Run ``fn`` in a worker thread once it is our turn; on cancellation stop it and wait until it has.
        """
        await self._wait_turn()
        try:
            return await anyio.to_thread.run_sync(self._holding_lock, fn, job, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            job.cancel.set()
            if job.abandon_if_not_started():
                self._lock.release()  # the worker never ran, so the turn is still ours to give back
            else:
                with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_GRACE_SECONDS):
                    # hold the caller until the model is free again: a cancelled call leaves nothing running
                    while not job.finished.is_set():
                        await anyio.sleep(0.01)
            raise

    def _holding_lock(self, fn: Callable[[], _T], job: _Job) -> _T:
        if not job.enter():
            raise GenerationCancelled("cancelled before the generation started")
        self._current = job
        try:
            return fn()
        finally:
            self._current = None
            self._lock.release()
            job.finished.set()
