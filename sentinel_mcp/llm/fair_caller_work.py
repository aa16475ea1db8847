"""The one worker for CPU work on what callers send, shared fairly between parties like the model's turns.

Compiling a caller's json_schema to a grammar (up to seconds of CPU for 64 KB), scanning its text for
injections and checking answers against its schema run one piece at a time, off the event loop
(``admission``). Served in arrival order, one principal with many large schemas queued ahead of another's
single call made that call wait for all of them. Pieces now wait per party and are served round-robin by
``FairTurns`` (a party that starts waiting is served after the piece running and at most one piece of each
party ahead of it), and a party may have at most ``per_party`` pieces waiting: past it the piece is refused
at once (``ModelBusy``), never queued.

One instance per event loop, used only from that loop (a piece runs in a worker thread; the scheduling and
waking happen on the loop).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import anyio

from sentinel_mcp.llm import caller_check
from sentinel_mcp.llm.errors import ModelBusy
from sentinel_mcp.llm.fair_turns import FairTurns

_T = TypeVar("_T")
# a party's calls in the Cortex are bounded by admission (max_queued_per_party + 1, each waiting for at most
# one piece at a time); these bounds only stop what admission does not see (in-process callers)
PER_PARTY = 64
TOTAL = 4096


class FairCallerWork:
    def __init__(self, per_party: int = PER_PARTY, total: int = TOTAL) -> None:
        self._turns = FairTurns(per_party, total)
        self._changed = anyio.Event()  # set (and replaced) whenever the worker is freed or a waiter leaves

    async def run(self, party: str, fn: Callable[..., _T], *args: object,
                  check: caller_check.Check | None = None) -> _T:
        """Run ``fn(*args)`` in a worker thread when it is ``party``'s turn; ``ModelBusy`` at once past the
        bounds on waiting pieces; ``CredentialsLapsed`` when ``check`` fails as the turn comes (not run)."""
        try:
            turn = self._turns.join(party)
        except ModelBusy:
            mine = self._turns.waiting().get(party, 0)
            raise ModelBusy(
                f"the Cortex is busy checking and compiling {party}'s own earlier requests ({mine} waiting, "
                "the most one caller may have waiting, or too many waiting in all); nothing was queued: "
                "ask again when they have finished"
            ) from None
        try:
            while not self._turns.take(turn):
                await self._changed.wait()  # nothing between take and wait yields: no wake-up is missed
            caller_check.ask(check, "as its input's turn to be checked came")
            # not abandoned on cancellation: the worker stays held until the piece has really finished
            return await anyio.to_thread.run_sync(fn, *args)
        finally:
            self._turns.leave(turn)  # a waiting piece is removed, the running one done
            woken, self._changed = self._changed, anyio.Event()
            woken.set()

    @property
    def waiting_count(self) -> int:
        return self._turns.waiting_count

    @property
    def running(self) -> bool:
        return self._turns.holder is not None
