"""The writes of a session's facts in flight, so a load of its mirror can tell it raced one.

``Knowledge._load`` reads the store, then replaces the session's module in the engine with what it read. A
write of the same session between the two (a look-up's facts learned, an invalidation, a confirmation used
up) went to the store after the read, and to the engine before the replace or not at all (the session was
not mirrored): the loaded mirror then missed a fact the store held (a decision denied "... did not tell (not
fetched)") or kept one the store no longer held (a confirmation used twice, a stale status proved). A load
during which a write of its session was in flight or done is done again (``Knowledge._load``).
"""

from __future__ import annotations

import asyncio
import functools
import itertools
from typing import Any, Awaitable, Callable, Iterable, TypeVar

T = TypeVar("T")


class MirrorWrites:
    def __init__(self, max_sessions: int = 20_000) -> None:
        self._busy: dict[str, int] = {}  # session -> its writes in flight
        # session -> a clock value taken when a write of it last ended (the most recently ended last;
        # bounded like Knowledge.generation: a session dropped reads 0, and no later value is 0)
        self._touched: dict[str, int] = {}
        self._clock = itertools.count(1)
        self.max_sessions = max_sessions
        self._idle: dict[str, asyncio.Event] = {}  # session -> set when its writes in flight end (waited on)

    def _touch(self, session: str) -> None:
        self._touched.pop(session, None)
        self._touched[session] = next(self._clock)
        while len(self._touched) > self.max_sessions:
            del self._touched[next(iter(self._touched))]

    def begin(self, sessions: Iterable[str]) -> Iterable[str]:
        # no touch here: a write begun during a load is in flight at its check (``mark``), or touched at
        # its end
        busy = self._busy
        held = sessions if isinstance(sessions, tuple) and len(sessions) == 1 else tuple(set(sessions))
        for s in held:
            busy[s] = busy.get(s, 0) + 1
        return held

    def end(self, held: Iterable[str]) -> None:
        for s in held:
            n = self._busy.get(s, 0) - 1
            if n > 0:
                self._busy[s] = n
            else:
                self._busy.pop(s, None)
                idle = self._idle.pop(s, None)
                if idle is not None:
                    idle.set()
            self._touch(s)

    async def idle(self, sessions: Iterable[str]) -> None:
        """Until no write of these sessions is in flight. A write never waits for a load of its own session
        (none of them loads one), so this ends."""
        for s in sessions:
            while s in self._busy:
                await self._idle.setdefault(s, asyncio.Event()).wait()

    def mark(self, sessions: Iterable[str]) -> tuple[int, ...] | None:
        """Where the writes of these sessions stand now; None while one is in flight."""
        marks = []
        for s in sessions:
            if s in self._busy:
                return None
            marks.append(self._touched.get(s, 0))
        return tuple(marks)


def writes(sessions_of: Callable[..., Iterable[str]]) -> Callable[[Callable[..., Awaitable[T]]],
                                                                  Callable[..., Awaitable[T]]]:
    """A method of ``Knowledge`` that writes the facts of ``sessions_of(*its arguments)``."""

    def wrap(fn: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
        @functools.wraps(fn)
        async def run(self: Any, *args: Any, **kw: Any) -> T:
            held = self.writes.begin(sessions_of(*args, **kw))
            try:
                return await fn(self, *args, **kw)
            finally:
                self.writes.end(held)

        return run

    return wrap
