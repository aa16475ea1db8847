"""An upstream's ``max_in_flight`` slots, shared fairly by the principals calling it.

One principal's calls that hang must not take every slot while another principal waits: while more than
one principal holds or waits for a slot, each may hold at most ``max(1, limit // principals)``; a slot that
frees goes to the waiter whose principal holds the fewest, of those the one granted a slot longest ago (round
robin; the earliest waiter of that principal), never to one at its cap.
A principal alone holds at most ``limit - 1`` when another principal may call this upstream (``shared``, set
from the config's principals and their reach): the slot held back is there at once for the next principal to
arrive, whatever the first's calls do (hang, report progress until ``max_call_seconds``); nothing is taken
back from a call once it runs. With ``limit`` 1, or no other principal, it may use every slot; one that
arrives while they are all held gets the next slot that frees, before any more of the first's calls.
``None`` (no principal) counts as one principal; ``share_of`` says whose share a call uses.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any, Hashable

from sentinel_mcp.identity.principal import INTERNAL_NAME


def share_of(principal: str | None, origin: str, client: str | None) -> Hashable:
    """The share of an upstream's slots a call uses: its principal's (a client's, an A2A peer's, the owner's;
    the solver's fetches for a call are that call's conversation owner's). Sentinel's own calls that run for
    no principal (a built-in's own work, a fetch for a conversation nobody owns) share by the caller Sentinel
    names (which built-in; the solver): a tuple, which no principal's name (a string) can equal."""
    if principal == INTERNAL_NAME:
        return (INTERNAL_NAME, origin, client)
    return principal


class FairSlots:
    def __init__(self, limit: int, shared: bool = False) -> None:
        self.limit = limit
        self.shared = shared  # another principal may call this upstream: one alone leaves it a slot
        self._held: dict[Any, int] = {}
        self._taken = 0  # sum of ``_held``
        self._waiting: deque[tuple[Any, asyncio.Future[None]]] = deque()
        # when each present principal was last granted a slot (the round robin); forgotten once it holds and
        # waits for none, so it is bounded by the principals present
        self._granted_at: dict[Any, int] = {}
        self._grants = 0

    def _cap(self) -> int:
        if not self._waiting and len(self._held) <= 1:
            return self._alone()  # one principal holds, none waits (the common case, cheap)
        present = set(self._held)
        present.update(who for who, granted in self._waiting if not granted.done())
        return self._alone() if len(present) <= 1 else max(1, self.limit // len(present))

    def _alone(self) -> int:
        """What a principal alone may hold: all, but one when another may come (and there are two or more)."""
        return self.limit - 1 if self.shared and self.limit > 1 else self.limit

    def _free(self) -> int:
        return self.limit - self._taken

    def try_take(self, who: Any) -> bool:
        """Takes a slot at once if ``who`` may have one and no waiter may (waiters go first)."""
        if self._free() <= 0 or self._held.get(who, 0) >= self._cap():
            return False
        if self._waiting and self._next_waiter() is not None:
            return False
        self._hold(who)
        return True

    async def take(self, who: Any) -> None:
        """Waits for a slot (``try_take`` first); a caller cancelled while waiting leaves none behind."""
        granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (who, granted)
        self._waiting.append(entry)
        try:
            await granted
        except BaseException:
            if granted.done() and not granted.cancelled():
                self.give_back(who)  # granted, then cancelled before it ran
            else:
                granted.cancel()
                if entry in self._waiting:
                    self._waiting.remove(entry)
                self._forget(who)
                self._grant()  # its leaving may raise the others' cap
            raise

    def give_back(self, who: Any) -> None:
        held = self._held.get(who, 0) - 1
        self._taken -= 1
        if held > 0:
            self._held[who] = held
        else:
            self._held.pop(who, None)
            self._forget(who)
        self._grant()

    def _hold(self, who: Any) -> None:
        self._held[who] = self._held.get(who, 0) + 1
        self._taken += 1
        self._grants += 1
        self._granted_at[who] = self._grants

    def _forget(self, who: Any) -> None:
        if who not in self._held and not any(w == who and not g.done() for w, g in self._waiting):
            self._granted_at.pop(who, None)

    def _next_waiter(self) -> tuple[Any, asyncio.Future[None]] | None:
        """The waiter that may take a free slot: its principal under the cap, holding the fewest, granted one
        longest ago (never: first), its earliest call."""
        cap = self._cap()
        best: tuple[Any, asyncio.Future[None]] | None = None
        best_rank = (0, 0)
        for entry in self._waiting:
            who, granted = entry
            held = self._held.get(who, 0)
            if granted.done() or held >= cap:
                continue
            rank = (held, self._granted_at.get(who, -1))
            if best is None or rank < best_rank:
                best, best_rank = entry, rank
        return best

    def _grant(self) -> None:
        while self._free() > 0 and (entry := self._next_waiter()) is not None:
            self._waiting.remove(entry)
            who, granted = entry
            self._hold(who)
            granted.set_result(None)
