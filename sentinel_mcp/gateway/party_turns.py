"""Turns at an upstream whose pushed questions name no call: one party's calls overlap, parties take turns.

A handshake-era upstream over stdio or SSE may push a request (an elicitation, a sampling request, roots)
while it works on a call, and nothing in it says which call. It is routed by who is in flight: with the
calls of one party only (a principal on one downstream channel: ``FrontLink.party``), it goes to that party
whoever of its calls asked, so those calls may overlap (a client's parallel tool calls); a call of another
party waits until the running party's calls have ended. A caller that is no party (``None``: an A2A peer,
the solver fetching facts) runs alone; a 2026-era HTTP request is a party of its own unless it carries a
conversation back (its channel then: ``FrontLink.party``).

Fair: while a call of another party waits, a new call of the running party queues behind it instead of
joining; when the running calls end, the first waiter of another principal than the one that just ran goes
next (round robin by principal: one principal's queued calls, hanging each up to its timeout, make another
wait out at most one turn of them), with every call of its party then waiting.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any


class PartyTurns:
    def __init__(self) -> None:
        self._party: Any = None  # the running calls' party
        self._who: Any = None  # the running calls' principal (whose turn it is, for the round robin)
        self._running = 0
        self._waiting: deque[tuple[Any, Any, asyncio.Future[None]]] = deque()

    @property
    def running(self) -> int:
        return self._running

    @property
    def waiting(self) -> int:
        """Calls waiting for their turn (granted ones about to run are running, not waiting)."""
        return sum(1 for _party, _who, granted in self._waiting if not granted.done())

    @asynccontextmanager
    async def turn(self, party: Any, who: Any = None) -> AsyncIterator[None]:
        """Runs the body in ``party``'s turn (``None``: alone); ``who``: the call's principal."""
        if self._running == 0 and not self._waiting:
            self._party, self._who, self._running = party, who, 1
        elif party is not None and party == self._party and not self._waiting:
            self._running += 1
        else:
            granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            entry = (party, who, granted)
            self._waiting.append(entry)
            try:
                await granted
            except BaseException:
                if granted.done() and not granted.cancelled():
                    self._leave()  # granted, then cancelled before it ran: its turn is given back
                else:
                    if entry in self._waiting:
                        self._waiting.remove(entry)
                    if self._running == 0:
                        self._next()  # it may have been the waiter others stood behind
                raise
        try:
            yield
        finally:
            self._leave()

    def _leave(self) -> None:
        self._running -= 1
        if self._running == 0:
            self._next()

    def _next(self) -> None:
        """The first waiter of another principal than the one that just ran goes next (else the first
        waiter), with all of that party's waiting calls (one, if no party). A waiter cancelled and not yet
        resumed is passed over (it leaves the queue itself)."""
        live = [e for e in self._waiting if not e[2].done()]
        self._waiting = deque(live)  # the cancelled ones would leave themselves: gone now
        if not live:
            self._party = self._who = None
            return
        pick = next((e for e in live if e[1] != self._who), live[0])
        self._waiting.remove(pick)
        party, who, granted = pick
        self._party, self._who, self._running = party, who, 1
        granted.set_result(None)
        if party is None:
            return
        for entry in [e for e in self._waiting if e[0] == party and not e[2].done()]:
            self._waiting.remove(entry)
            self._running += 1
            entry[2].set_result(None)
