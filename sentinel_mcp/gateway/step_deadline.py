"""A deadline on one awaited step that arms its timer only if the step waits.

A deadline can end a step only where it waits (asyncio cancels a task at its next suspension). Most steps on
the hot path finish without waiting at all: a guard decision made on the caller's thread, an in-process
built-in's no-op handler. So the step runs first on its own, and only a step that waits goes on under
``asyncio.timeout_at`` with the deadline it had from the start (issue 21: the timer, its handle in the loop's
heap and its cancellation were a few percent of the event loop per call). The answer, the exception and the
cancellation are the ones ``async with asyncio.timeout_at(when): await step()`` gives.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any, Awaitable, Callable, Coroutine, Generator, Generic, TypeVar

T = TypeVar("T")


class StepDeadline:
    """``await StepDeadline(when).run(step)``; ``expired`` tells afterwards whether this deadline ended it (as
    ``asyncio.Timeout.expired()`` does: a ``TimeoutError`` of the step's own leaves it False). ``latest``:
    a time it is never moved past (``reschedule`` keeps to it), so a step run under it in the same task needs
    no deadline of its own that is due later (``builtin_direct.py``: one timer for a built-in's call)."""

    __slots__ = ("when", "latest", "since", "expired", "_timeout")

    def __init__(self, when: float, latest: float = math.inf, since: float = -math.inf) -> None:
        self.latest = latest
        self.since = since  # the loop's time when it was set (``bounds``), when the caller knows it
        self.when = when if when <= latest else latest  # not min(): a call, on every call's deadline
        self.expired = False
        self._timeout: asyncio.Timeout | None = None  # the timer, once the step waits

    def bounds(self, limit: float) -> bool:
        """Whether this deadline, whatever moves it, always ends a step it runs before a limit of ``limit``
        seconds set now would (now is no earlier than ``since``: no clock read)."""
        return self.latest <= self.since + limit

    def reschedule(self, when: float) -> None:
        """Move the deadline (``asyncio.Timeout.reschedule``), never past ``latest``: before the step waits
        only the time changes; a waiting step's timer moves, ``-math.inf`` ending it now. Raises RuntimeError
        once the timer is done (the step ended or timed out), as asyncio's does."""
        if when > self.latest:
            when = self.latest
        self.when = when
        if self._timeout is not None:
            self._timeout.reschedule(when)

    async def run(self, step: Callable[[], Awaitable[T]]) -> T:
        awaitable = step()
        if not asyncio.iscoroutine(awaitable):  # another kind of awaitable: the whole of it under the timer
            return await self._timed(awaitable)
        try:
            waiting_on = awaitable.send(None)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        except BaseException:
            awaitable.close()
            raise
        return await self._timed(Resumed(awaitable, waiting_on))

    async def _timed(self, awaitable: Awaitable[T]) -> T:
        timeout = self._timeout = asyncio.timeout_at(self.when)
        try:
            async with timeout:
                return await awaitable
        finally:
            self.expired = timeout.expired()


class Resumed(Generic[T]):
    """Awaiting it goes on with a coroutine already started (its first ``send`` done, ``waiting_on`` what it
    yielded to the event loop): the rest of ``yield from`` by hand (PEP 380), so the task awaiting it drives
    the coroutine exactly as if it had awaited it from the start (what it sends, throws in, and closing)."""

    __slots__ = ("_coro", "_waiting_on")

    def __init__(self, coro: Coroutine[Any, Any, T], waiting_on: Any) -> None:
        self._coro = coro
        self._waiting_on = waiting_on

    def __await__(self) -> Generator[Any, Any, T]:
        coro, value = self._coro, self._waiting_on
        while True:
            try:
                sent = yield value
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # noqa: BLE001 - thrown in by the task (a cancellation): passed on
                try:
                    value = coro.throw(exc)
                except StopIteration as done:
                    return done.value  # type: ignore[no-any-return]
            else:
                try:
                    value = coro.send(sent)
                except StopIteration as done:
                    return done.value  # type: ignore[no-any-return]
