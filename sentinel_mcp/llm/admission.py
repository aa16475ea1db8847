"""Admission to the Cortex: a call is counted against the model queue's bounds before any work is done for it.

The fair queue (``fair_turns``) bounds the calls waiting for the model, but a call joins it only after its
caller's json_schema was checked and compiled to a grammar (a 50 KB schema: seconds of CPU). One principal's
twenty calls at once were all compiled, in twenty worker threads contending with the event loop for the
interpreter, before fifteen were refused. Admission applies the same bounds from the start of a call (a
party's waiting turns plus the one it may run; everyone's likewise), and the CPU work on what callers send
(reading their text for control tokens and injections, compiling their schemas, checking answers against
them) runs one piece at a time, in one worker thread per event loop, never on the event loop itself, the
parties waiting served round-robin (``fair_caller_work``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from anyio.lowlevel import RunVar

from sentinel_mcp.llm.errors import ModelBusy
from sentinel_mcp.llm.fair_caller_work import FairCallerWork

_T = TypeVar("_T")
# per event loop: its events are bound to the loop that made them
_CALLER_WORK: RunVar[FairCallerWork] = RunVar("sentinel_llm_caller_work")


class Admission:
    """Calls in the Cortex per party and in all; ``per_party`` and ``total`` include the one running."""

    def __init__(self, per_party: int, total: int) -> None:
        self.per_party, self.total = per_party, total
        self._lock = threading.Lock()
        self._calls: dict[str, int] = {}
        self._all = 0

    @contextmanager
    def admitted(self, party: str) -> Iterator[None]:
        """Hold a place for ``party``'s call while it runs; ``ModelBusy`` at once past the bounds."""
        with self._lock:
            mine = self._calls.get(party, 0)
            if mine >= self.per_party:
                raise ModelBusy(
                    f"the model is busy with {party}'s own earlier requests ({mine} under way, the most one "
                    "caller may have); nothing was queued: ask again when one of them has finished"
                )
            if self._all >= self.total:
                # how many calls others have under way is theirs: the caller learns only to wait
                raise ModelBusy("the model is busy (the most requests it takes are under way); nothing was "
                                "queued: ask again later")
            self._calls[party] = mine + 1
            self._all += 1
        try:
            yield
        finally:
            with self._lock:
                self._all -= 1
                left = self._calls[party] - 1
                if left:
                    self._calls[party] = left
                else:
                    del self._calls[party]

    def under_way(self) -> dict[str, int]:
        with self._lock:
            return dict(self._calls)


def _worker() -> FairCallerWork:
    try:
        return _CALLER_WORK.get()
    except LookupError:
        worker = FairCallerWork()
        _CALLER_WORK.set(worker)
        return worker


async def caller_work(fn: Callable[..., _T], *args: object, party: str,
                      check: Callable[[], object] | None = None) -> _T:
    """Run CPU work on what ``party`` sent in a worker thread, one piece at a time, parties served in turn;
    ``check``: the caller's credentials, asked when the piece's turn comes (``caller_check``)."""
    return await _worker().run(party, fn, *args, check=check)


def caller_work_waiting() -> int:
    """How many pieces of work on callers' input wait for the one running (tests and the operator)."""
    return _worker().waiting_count
