"""Facts a tool's result taught, written behind the call that learned them (issue 21).

A result's facts are a copy of what its tool says, fetched again when missing (tools before questions), so
the call that learned them need not wait for their commit: ``FactStore.learn`` puts their rows here, and they
are queued as one write ``WINDOW`` after the first of them (at once past ``MAX_ROWS``). The facts of many
calls then share one commit of the data dir's facts file, whose rollback journal costs about five fsyncs a
commit; under 16 clients of the airline read, a call waited ~12 ms for it. What keeps the store exact:

- order: every other write of the store queues what is held first (``flush``), and its writer runs jobs in
  the order they were queued, so a delete, an invalidation or a spent confirmation made after a learning is
  never undone by it;
- reads: a read of a session's facts queues what is held and waits until the session's learned facts are
  committed or failed (``settled``); a session loaded in the engine has them in its mirror at once;
- bounds: at most ``MAX_ROWS`` rows held and ``MAX_WRITES`` writes in flight; past either, the learning call
  waits for its own commit;
- failure: a write that fails is logged, and the store's health (degraded by an I/O fault) refuses calls as
  for any write; the facts are missing from the store and are fetched again when a proof needs them. A crash
  loses at most the last ``WINDOW`` of learned facts; closing the store writes what is held first.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable

log = logging.getLogger(__name__)

WINDOW = 0.02  # seconds the first learned row waits for others to share its commit
MAX_ROWS = 512  # fact rows held before they are queued at once
MAX_WRITES = 8  # learned writes queued and not yet committed, past which a learning waits for its own

Submit = Callable[[list[tuple[Any, ...]], list[tuple[Any, ...]]], "asyncio.Future[Any]"]


class LearningBuffer:
    """Fact rows and their value rows held for one write; ``submit`` queues them on the store's writer."""

    def __init__(self, submit: Submit) -> None:
        self._submit = submit
        self._rows: list[tuple[Any, ...]] = []
        self._values: list[tuple[Any, ...]] = []
        self._sessions: set[str] = set()  # the sessions of the rows held
        self._timer: asyncio.TimerHandle | None = None
        self._writing: dict[str, set[asyncio.Future[Any]]] = {}  # session -> its writes not yet committed
        self._in_flight: set[asyncio.Future[Any]] = set()

    def hold(self, sessions: set[str], rows: list[tuple[Any, ...]],
             values: list[tuple[Any, ...]]) -> "asyncio.Future[Any] | None":
        """Hold these rows; the write to wait for when a bound is reached (None: the caller need not wait)."""
        if not self._rows:
            self._timer = asyncio.get_running_loop().call_later(WINDOW, self.flush)
        self._rows.extend(rows)
        self._values.extend(values)
        self._sessions.update(sessions)
        if len(self._rows) >= MAX_ROWS or len(self._in_flight) >= MAX_WRITES:
            return self.flush()
        return None

    def flush(self) -> "asyncio.Future[Any] | None":
        """Queue what is held as one write now (before any write queued after this returns)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._rows:
            return None
        rows, values, sessions = self._rows, self._values, self._sessions
        self._rows, self._values, self._sessions = [], [], set()
        try:
            fut = self._submit(rows, values)
        except Exception as e:  # noqa: BLE001 - a closed or failed store: the facts are fetched again
            log.warning("facts learned from tools' results were not stored (%d rows): %s", len(rows), e)
            return None
        self._in_flight.add(fut)
        for s in sessions:
            self._writing.setdefault(s, set()).add(fut)

        def landed(f: "asyncio.Future[Any]") -> None:
            self._in_flight.discard(f)
            for s in sessions:
                held = self._writing.get(s)
                if held is not None:
                    held.discard(f)
                    if not held:
                        del self._writing[s]
            if not f.cancelled() and f.exception() is not None:
                log.warning("facts learned from tools' results were not stored (%d rows): %s", len(rows),
                            f.exception())

        fut.add_done_callback(landed)
        return fut

    async def settled(self, session: str | None = None) -> None:
        """Wait until the learned facts of ``session`` (of every session: None) are committed or failed."""
        if session is None or session in self._sessions:
            self.flush()
        pending = set(self._in_flight) if session is None else set(self._writing.get(session, ()))
        if pending:
            await asyncio.wait(pending)
