"""A conversation's writes that change what its policy knows take turns: decided, forwarded and their effects
applied, one after the other.

A rulebase's ``effect/3`` says what a write changes (an order's status, "its items were modified once"); the
guard applies it when the write's result comes back. Two such writes of one conversation decided at the same
time were each decided on the facts from before the other ran: an agent calling "modify items" twice in
parallel had both allowed, though each one, applied, refuses the other. So the next one of the conversation
is decided only once the one before it has been observed (or has ended without a result).

A call nested in another (``depth`` > 0: a built-in's own calls) does not wait for a turn: its caller may be
the call holding it. While the conversation's turn is taken, such a call is refused instead of hanging.

Every such write then also takes, after its own, the turns shared with the other conversations of this
process that its decision depends on (the guard's ``turn_keys``: its upstream's, each upstream its guard reads
bound facts from, the kept facts' where it reads or establishes one; policy/write_turns.py): what one
conversation's write changes is what another's is decided on, in the store (two conversations of one retail
customer cancelling, or modifying the items of, one order at once were each decided on the order as it was
before the other's write, and both went through) or in a fact kept for every conversation (the rulebase's
``option(kept(...))``: airline.pl's "a certificate was sent for this reservation"). The turns cover a call's
last decision, its forwarding and its observation, never a question of Sentinel's (asked between rounds).
They were one turn for every write of the process: one principal's write held by a slow upstream (up to its
timeout: minutes) held every other principal's writes to every other upstream, and refused every nested one.
Now a write waits only for the writes it depends on, taken in one order (sorted: no two writes each hold one
the other waits for), and at most ``policy.write_turn_seconds``: a turn not had by then denies the call, which
is never forwarded without it. With replicas of a server store the same turns are also the cluster's (the
guard's ``cluster_turns``), and a write that establishes a kept fact also takes the kept facts' turn (the
guard's ``kept_turn``): taken, within the same bound, before the decision and held until the outcome is
recorded; a turn not had denies the call.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from typing import AsyncIterator, Awaitable, Callable, Sequence, TypeVar

from sentinel_mcp.core.decision import Guard, ToolCall

_T = TypeVar("_T")


WRITE_TURN_SECONDS = 60.0  # the default of ``policy.write_turn_seconds``


class SessionWrites:
    """One turn per conversation (session id) for the writes with effects, and the turns they share
    (``shared``, a table of its own: no key of one is a key of the other); a turn's lock is dropped when
    nobody holds or awaits it, so a table holds only the turns with a write in flight."""

    def __init__(self, within: float = WRITE_TURN_SECONDS, *, shared: bool = True) -> None:
        self._locks: dict[str, asyncio.Lock] = {}
        self._users: Counter[str] = Counter()
        self.within = within  # how long a write waits for the shared turns it needs, then is denied
        self.shared: SessionWrites | None = SessionWrites(within, shared=False) if shared else None

    @contextlib.asynccontextmanager
    async def turn(self, session: str, *, wait: bool) -> AsyncIterator[bool]:
        """True, holding the conversation's turn; False (at once) if ``wait`` is False and it is taken."""
        lock = self._locks.setdefault(session, asyncio.Lock())
        self._users[session] += 1
        try:
            if not wait and lock.locked():
                yield False
            else:
                async with lock:
                    yield True
        finally:
            self._users[session] -= 1
            if not self._users[session]:
                del self._users[session]
                self._locks.pop(session, None)

    @contextlib.asynccontextmanager
    async def turns(self, keys: Sequence[str], *, wait: bool) -> AsyncIterator[bool]:
        """True, holding every turn of ``keys``, taken in sorted order within ``self.within`` seconds; else
        False, holding none. ``wait`` False: only turns free now (a nested call's caller may hold one)."""
        names = sorted(set(keys))
        for k in names:
            self._locks.setdefault(k, asyncio.Lock())
            self._users[k] += 1
        held: list[asyncio.Lock] = []
        try:
            try:
                # a lock free now is taken without suspending: a deadline of now refuses only a wait
                async with asyncio.timeout(self.within if wait else 0):
                    for k in names:
                        await self._locks[k].acquire()
                        held.append(self._locks[k])
                had = True
            except TimeoutError:
                had = False
            if not had:
                for lock in reversed(held):
                    lock.release()
                held.clear()
            yield had
        finally:
            for lock in reversed(held):
                lock.release()
            for k in names:
                self._users[k] -= 1
                if not self._users[k]:
                    del self._users[k]
                    self._locks.pop(k, None)

    def taken(self, session: str) -> bool:
        lock = self._locks.get(session)
        return lock is not None and lock.locked()


async def in_turns(writes: SessionWrites, guard: Guard, call: ToolCall, *, wait: bool,
                   run: Callable[[], Awaitable[_T]], refuse: Callable[[str], Awaitable[_T]]) -> _T:
    """``run()`` holding the turns a write with effects takes (its conversation's, then those it shares with
    the writes it depends on; a kept write's also the cluster's), else ``refuse(why)``. ``wait`` False (a
    nested call): tried once."""
    shared = writes.shared if writes.shared is not None else writes
    async with writes.turn(call.session_id, wait=wait) as mine:
        if not mine:
            return await refuse(f"{call.name}: another change of this conversation is in progress; one "
                                "change at a time, call again once it has finished")
        # then after the other conversations' writes it depends on: decided on what they leave
        keys = guard.turn_keys(call)
        async with shared.turns(keys, wait=wait) as ours:
            if not ours:
                waited = f" for {shared.within:g} s" if wait else ""
                return await refuse(f"{call.name}: another change this one depends on has been in progress"
                                    f"{waited}; nothing was done, call again once it has finished")
            # and after those of the other replicas of a server store (this process's first: one waiter each)
            async with guard.cluster_turns(keys, wait=wait, within=shared.within) as refused:
                if refused is not None:
                    return await refuse(f"{call.name}: {refused}")
                if not guard.keeps_facts(call):
                    return await run()
                async with guard.kept_turn(call, wait=wait) as refused:
                    if refused is not None:
                        return await refuse(f"{call.name}: {refused}")
                    return await run()
