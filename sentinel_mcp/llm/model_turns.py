"""Turns on the model: one generation holds it at a time, parties are served fairly, cancellable.

Who goes next is ``fair_turns.FairTurns``'s decision (round-robin between parties, bounded waiting: a call
past the bounds is refused at once with ``ModelBusy``). Waiting happens on the event loop (cancellable, no
worker thread parked per waiter) or, for callers already on a worker thread, on that thread; the turn's
holder runs in one worker thread and hands the model on there when llama.cpp is done. A caller cancelled
while waiting leaves the queue; one cancelled while its generation runs sets the job's flag (read once per
token) and is held until the model is free again, so a cancelled call leaves nothing running.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import anyio

from sentinel_mcp.llm import caller_check
from sentinel_mcp.llm.admission import Admission
from sentinel_mcp.llm.errors import CredentialsLapsed, GenerationCancelled
from sentinel_mcp.llm.fair_turns import PER_PARTY, TOTAL, FairTurns, Turn

_T = TypeVar("_T")
LOCK_POLL_SECONDS = 0.05
CANCEL_GRACE_SECONDS = 60.0
ENGINE_PARTY = "sentinel:engine"  # the engine's own work (loading, checking grammars, closing)


@dataclass
class _Job:
    cancel: threading.Event = field(default_factory=threading.Event)
    finished: threading.Event = field(default_factory=threading.Event)
    tokens: int = 0
    started_at: float = 0.0
    first_token_at: float | None = None
    deadline: float = float("inf")  # perf_counter time the generation's turn ends (max_generation_seconds)
    timed_out: bool = False  # stopped at its deadline (not cancelled)
    # the caller's credential check (None: credentials that hold for the process's life), asked when the
    # turn comes and before each chunk of work; ``lapse``: why it stopped the generation, once it did
    check: caller_check.Check | None = None
    lapse: CredentialsLapsed | None = None
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

    def still_holds(self, where: str) -> bool:
        """Ask the caller's check from the generation's worker thread; False (``lapse`` set) once it fails."""
        if self.lapse is None:
            self.lapse = caller_check.ask_from_worker(self.check, where)
        return self.lapse is None

    def abandon_if_not_started(self) -> bool:
        with self._state:
            if self._entered:
                return False
            self._abandoned = True
            return True


class ModelTurns:
    def __init__(self, per_party: int = PER_PARTY, total: int = TOTAL) -> None:
        self.turns = FairTurns(per_party, total)
        # the same bounds from the start of a Cortex call (its schema compiled before it joins the turns),
        # counting the one turn a party may run besides those it has waiting
        self.admission = Admission(per_party + 1, total + 1)
        self._current: _Job | None = None  # the generation holding the model, if any

    @property
    def tokens_in_flight(self) -> int | None:
        """Tokens sampled so far by the running generation; None when the model is idle."""
        job = self._current
        return job.tokens if job is not None else None

    async def _wait_turn(self, party: str) -> Turn:
        turn = self.turns.join(party)  # ModelBusy at once past the bounds
        try:
            while not self.turns.take(turn):
                await anyio.sleep(LOCK_POLL_SECONDS)
        except BaseException:
            self.turns.leave(turn)
            raise
        return turn

    def _wait_turn_blocking(self, job: _Job, party: str, *, first: bool = False) -> Turn:
        turn = self.turns.join(party, first=first)
        try:
            while not self.turns.take(turn):
                if job.cancel.is_set():
                    raise GenerationCancelled("cancelled while waiting for the model")
                time.sleep(LOCK_POLL_SECONDS)
        except BaseException:
            self.turns.leave(turn)
            raise
        return turn

    async def _in_turn(self, fn: Callable[[], _T], job: _Job, party: str) -> _T:
        """Run ``fn`` in a worker thread once it is ``party``'s turn; on cancellation stop it and wait
        until it has."""
        turn = await self._wait_turn(party)
        lapse = caller_check.lapsed(job.check, "as its turn of the model came")
        if lapse is not None:  # its caller's credentials lapsed while it waited: the model never runs for it
            self.turns.done(turn)
            raise lapse
        try:
            return await anyio.to_thread.run_sync(self._holding_turn, fn, job, turn, abandon_on_cancel=True)
        except BaseException as exc:
            cancelled = isinstance(exc, anyio.get_cancelled_exc_class())
            if cancelled:
                job.cancel.set()
            if job.abandon_if_not_started():
                self.turns.done(turn)  # the worker never ran, so the turn is still ours to hand on
            elif cancelled:
                with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_GRACE_SECONDS):
                    # hold the caller until the model is free again: a cancelled call leaves nothing running
                    while not job.finished.is_set():
                        await anyio.sleep(0.01)
            raise

    def _holding_turn(self, fn: Callable[[], _T], job: _Job, turn: Turn) -> _T:
        if not job.enter():
            raise GenerationCancelled("cancelled before the generation started")
        self._current = job
        try:
            return fn()
        finally:
            self._current = None
            self.turns.done(turn)
            job.finished.set()
