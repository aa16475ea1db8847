"""Fair turns on the one model: round-robin between the parties asking, bounded waiting, nothing left behind.

A *party* is whoever a turn is for: the principal a tool call runs for (``dave``, ``owner``), or an internal
user of the model (``builtin:agent``, ``builtin:swarm``, ``builtin:device``). One turn runs at a time. The
parties with turns waiting stand in a ring; the next turn goes to the first waiting turn of the party at the
head of the ring. A party whose turn is granted leaves the ring while it holds the model, and if it has more
turns waiting it rejoins at the back when that turn is done. So with A flooding and B and C asking too,
turns go A, B, C, A, B, ...; a party that starts waiting is served after the turn in flight and at most one
turn of each other party already in the ring ahead of it, however many turns those parties have queued.

Waiting is bounded: a party may have at most ``per_party`` turns waiting, and all parties together at most
``total``. Past either bound ``join`` raises ``ModelBusy`` at once (nothing is queued). A turn whose caller
gives up before its grant is taken out of the queue (``leave``), so no work is done for a caller that left.

This module only decides who goes next; ``model_turns.ModelTurns`` waits for the grant and runs the turn.
It is thread-safe: callers wait on the event loop or on worker threads.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Literal

from sentinel_mcp.llm.errors import ModelBusy

PER_PARTY = 4  # turns one party may have waiting (besides the one it may be running)
TOTAL = 64  # turns all parties together may have waiting


@dataclass(eq=False)
class Turn:
    """One caller's turn of the model: waiting, then holding, then done (or left, if its caller gave up)."""

    party: str
    state: Literal["waiting", "holding", "done", "left"] = "waiting"


@dataclass
class _Party:
    waiting: deque[Turn] = field(default_factory=deque)


class FairTurns:
    def __init__(self, per_party: int = PER_PARTY, total: int = TOTAL) -> None:
        if per_party < 1 or total < 1:
            raise ValueError("the bounds on waiting turns must be at least 1")
        self.per_party, self.total = per_party, total
        self._lock = threading.Lock()
        self._parties: dict[str, _Party] = {}  # parties with turns waiting or holding
        self._ring: deque[str] = deque()  # parties with turns waiting, in the order they are served
        self._holder: Turn | None = None
        self._waiting = 0

    # --- asking -----------------------------------------------------------------------------------
    def join(self, party: str, *, first: bool = False) -> Turn:
        """A new waiting turn for ``party``; ``ModelBusy`` at once past the bounds. ``first``: the engine's
        own shutdown, never refused and next after the turn in flight (a waiter whose event loop is gone
        must not keep the model open at exit)."""
        bounded = not first
        with self._lock:
            p = self._parties.get(party)
            mine = len(p.waiting) if p is not None else 0
            if bounded and mine >= self.per_party:
                raise ModelBusy(
                    f"the model is busy with {party}'s own earlier requests ({mine} waiting, the most one "
                    "caller may have waiting); nothing was queued: ask again when one of them has finished"
                )
            if bounded and self._waiting >= self.total:
                # how many calls others have waiting is theirs: the caller learns only to wait
                raise ModelBusy("the model is busy (the most requests it queues are waiting); nothing was "
                                "queued: ask again later")
            if p is None:
                p = self._parties[party] = _Party()
            turn = Turn(party)
            self._waiting += 1
            if first:
                p.waiting.appendleft(turn)
                if party in self._ring:
                    self._ring.remove(party)
                self._ring.appendleft(party)
                return turn
            p.waiting.append(turn)
            holds = self._holder is not None and self._holder.party == party
            if len(p.waiting) == 1 and not holds:  # it rejoins when its running turn is done
                self._ring.append(party)
            return turn

    def take(self, turn: Turn) -> bool:
        """Grant ``turn`` now if the model is free and ``turn`` is next; False: keep waiting."""
        with self._lock:
            if self._holder is not None or self._next() is not turn:
                return False
            self._ring.popleft()
            self._parties[turn.party].waiting.popleft()
            self._waiting -= 1
            turn.state = "holding"
            self._holder = turn
            return True

    def done(self, turn: Turn) -> None:
        """The holder's turn is over: the model is free; its party goes to the back of the ring if it
        waits."""
        with self._lock:
            if turn is not self._holder:
                return
            turn.state, self._holder = "done", None
            p = self._parties[turn.party]
            if not p.waiting:
                del self._parties[turn.party]
            elif turn.party not in self._ring:  # (it is in it already when its shutdown came first)
                self._ring.append(turn.party)

    def leave(self, turn: Turn) -> None:
        """The caller gave up: a waiting turn is removed, a holding one is done."""
        with self._lock:
            if turn.state == "waiting":
                p = self._parties[turn.party]
                p.waiting.remove(turn)
                self._waiting -= 1
                turn.state = "left"
                if not p.waiting:
                    if turn.party in self._ring:
                        self._ring.remove(turn.party)
                    if self._holder is None or self._holder.party != turn.party:
                        del self._parties[turn.party]
                return
        if turn.state == "holding":
            self.done(turn)

    # --- reading ----------------------------------------------------------------------------------
    def _next(self) -> Turn | None:
        return self._parties[self._ring[0]].waiting[0] if self._ring else None

    def next_turn(self) -> Turn | None:
        """The turn granted next when the model is free (None: nobody waits)."""
        with self._lock:
            return self._next()

    @property
    def holder(self) -> Turn | None:
        return self._holder

    @property
    def waiting_count(self) -> int:
        return self._waiting

    def waiting(self) -> dict[str, int]:
        """Turns waiting per party (for tests and the operator; not shown to callers: names are private)."""
        with self._lock:
            return {name: len(p.waiting) for name, p in self._parties.items() if p.waiting}
