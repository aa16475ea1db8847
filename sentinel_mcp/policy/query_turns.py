"""Turns at the query worker, taken by principals in rotation.

The worker proves one goal at a time. Served first come, first served, a principal that sends many heavy
goals at once (each within its budget) makes every other principal's goal wait behind all of them. Here each
principal waits in a queue of its own (at most ``per_principal`` goals: more are refused at once, never held),
and when a turn ends the next one goes to the principal after the last one served, so another principal's goal
waits for at most one goal of each principal with goals waiting.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict, deque
from typing import AsyncIterator

from sentinel_mcp.core.errors import PolicyError


class TooManyWaiting(PolicyError):
    """The principal already has as many goals waiting as it may."""


class QueryTurns:
    def __init__(self, per_principal: int = 8) -> None:
        self.per_principal = per_principal
        self._busy = False
        # principals with goals waiting, in the order they are served (one served moves to the end)
        self._waiting: OrderedDict[str, deque[asyncio.Future[None]]] = OrderedDict()

    def waiting(self, principal: str) -> int:
        return len(self._waiting.get(principal, ()))

    @contextlib.asynccontextmanager
    async def turn(self, principal: str) -> AsyncIterator[None]:
        """Hold the worker for one goal of ``principal``; raises ``TooManyWaiting`` without waiting."""
        if self._busy or self._waiting:
            queue = self._waiting.get(principal)
            if queue is not None and len(queue) >= self.per_principal:
                raise TooManyWaiting(principal)
            if queue is None:
                queue = self._waiting[principal] = deque()
            mine: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            queue.append(mine)
            try:
                await mine  # handed the turn by the one before (``_pass_on``): busy stays set
            except BaseException:
                if mine.done() and not mine.cancelled():  # given the turn as it was cancelled: pass it on
                    self._pass_on()
                else:
                    self._forget(principal, mine)
                raise
        else:
            self._busy = True
        try:
            yield
        finally:
            if principal in self._waiting:  # it just had a turn: the others come first
                self._waiting.move_to_end(principal)
            self._pass_on()

    def _forget(self, principal: str, fut: asyncio.Future[None]) -> None:
        queue = self._waiting.get(principal)
        if queue is None:
            return
        with contextlib.suppress(ValueError):
            queue.remove(fut)
        if not queue:
            del self._waiting[principal]

    def _pass_on(self) -> None:
        """The turn to the next principal in rotation (its oldest goal), or the worker is free."""
        while self._waiting:
            principal, queue = next(iter(self._waiting.items()))
            fut = queue.popleft()
            del self._waiting[principal]
            if queue:  # still has goals waiting: to the back of the rotation
                self._waiting[principal] = queue
            if not fut.done():
                fut.set_result(None)
                return
        self._busy = False
