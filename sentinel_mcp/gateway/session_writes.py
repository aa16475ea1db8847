"""A conversation's writes that change what its policy knows take turns: decided, forwarded and their effects
applied, one after the other.

A rulebase's ``effect/3`` says what a write changes (an order's status, "its items were modified once"); the
guard applies it when the write's result comes back. Two such writes of one conversation decided at the same
time were each decided on the facts from before the other ran: an agent calling "modify items" twice in
parallel had both allowed, though each one, applied, refuses the other. So the next one of the conversation
is decided only once the one before it has been observed (or has ended without a result).

A call nested in another (``depth`` > 0: a built-in's own calls) does not wait for a turn: its caller may be
the call holding it. While the conversation's turn is taken, such a call is refused instead of hanging.

Every such write then also takes one turn shared by all conversations of this process (``SHARED_TURN``),
after its own: what one conversation's write changes is what another's is decided on, in the store (two
conversations of one retail customer cancelling, or modifying the items of, one order at once were each
decided on the order as it was before the other's write, and both went through) or in a fact kept for every
conversation (the rulebase's ``option(kept(...))``: airline.pl's "a certificate was sent for this
reservation"). The turn covers a call's last decision, its forwarding and its observation, never a question of
Sentinel's (asked between rounds). A write that establishes a kept fact also takes, with replicas of a server
store, the cluster's turn (the guard's ``kept_turn``), taken before the decision and held until the outcome is
recorded: a turn not had denies the call. (Other writes' turns are this process's: replicas of a shared store
do not share them.)
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from typing import AsyncIterator, Awaitable, Callable, TypeVar

from sentinel_mcp.core.decision import Guard, ToolCall

_T = TypeVar("_T")


# the turn every conversation's writes with effects share: no conversation has this id (theirs hold a "/")
SHARED_TURN = "$shared"


class SessionWrites:
    """One turn per conversation (session id) for the writes with effects; a turn's lock is dropped when
    nobody holds or awaits it, so the table holds only conversations with a write in flight."""

    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}
        self._users: Counter[str] = Counter()

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

    def taken(self, session: str) -> bool:
        lock = self._locks.get(session)
        return lock is not None and lock.locked()


async def in_turns(writes: SessionWrites, guard: Guard, call: ToolCall, *, wait: bool,
                   run: Callable[[], Awaitable[_T]], refuse: Callable[[str], Awaitable[_T]]) -> _T:
    """``run()`` holding the turns a write with effects takes (its conversation's, then the process's; a kept
    write's also the cluster's), else ``refuse(why)``. ``wait`` False (a nested call): tried once."""
    async with writes.turn(call.session_id, wait=wait) as mine:
        if not mine:
            return await refuse(f"{call.name}: another change of this conversation is in progress; one "
                                "change at a time, call again once it has finished")
        # then after every other conversation's: decided on what the store and facts say once theirs are done
        async with writes.turn(SHARED_TURN, wait=wait) as ours:
            if not ours:
                return await refuse(f"{call.name}: another such change is in progress; call again once it "
                                    "has finished")
            if not guard.keeps_facts(call):
                return await run()
            async with guard.kept_turn(call, wait=wait) as refused:
                if refused is not None:
                    return await refuse(f"{call.name}: {refused}")
                return await run()
