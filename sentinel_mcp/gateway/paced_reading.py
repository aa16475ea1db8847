"""An upstream's messages as the SDK's session receives them, read no faster than its notice budget allows.

Every SDK transport (stdio, SSE, streamable HTTP) hands its session each message through a memory stream
without a buffer: while the session does not take the next one, the transport's reader waits at its hand-over
and stops reading the pipe or socket, so the upstream waits at its own write. Wrapped here, the session takes
the next message only once the budget has room (``notice_budget.py``): an upstream flooding notices that
reach no client is read at the budget's pace down every road (the lean stdio path also pauses its own tap,
``lean_stdio._TappedStdout``; the lean HTTP path between its events, ``lean_upstream``). What the transport
could not read as a message (not JSON, not JSON-RPC: an ``Exception`` in the stream), and an answer to no
request waiting (``asked`` says which ids wait: one never asked, or one whose call has ended), are charged to
the budget too: a flood of either costs the gateway its parse and its log line each, and reaches no one.
A progress notice that is not a waiting call's own (``stray`` says, and counts and charges it: a token of
any shape but the int the call was sent with, a value no number) is taken off here, never handed to the
session: the SDK would match a string spelling a waiting call's id to that call, and log a refused one with
its traceback, uncharged. So is every other notice the session could not take (``stray`` says: a method
no era defines, params not of their method's shape, ``unfit_notices.py``): the session logged each. And a
notice the transport could not read as a message (its method no string, its params no object:
``unreadable_notices.py``), which failed the calls in flight.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Callable

import anyio
from mcp.types import JSONRPCError, JSONRPCNotification, JSONRPCResponse

from sentinel_mcp.gateway.notice_budget import NoticeBudget
from sentinel_mcp.gateway.unreadable_notices import Unreadable, notice_in, read_quietly

read_quietly()


class PacedReceive:
    """The session's end of a transport's read stream, paused while the budget is spent."""

    def __init__(self, inner: Any, budget: NoticeBudget, asked: Callable[[Any], bool] | None,
                 stray: Callable[[Any, Any], bool] | None = None) -> None:
        self.inner = inner
        self.budget = budget
        self.asked = asked
        self.stray = stray

    async def receive(self) -> Any:
        while True:
            if self.budget.pause_until:  # no coroutine made for the check: it is every message's
                await self.budget.paced()
            item = await self.inner.receive()
            self.budget.heard += 1
            if isinstance(item, Exception):
                notice = notice_in(item)  # a notice the transport could not read: unfit, not garbage
                if notice is not None and self.stray is not None and self.stray(notice.get("method"),
                                                                                notice.get("params")):
                    continue
                self.budget.spend()
                return item
            msg = item.message
            if isinstance(msg, JSONRPCNotification):
                stray = self.stray
                method, params = ((msg.original.get("method"), msg.original.get("params"))
                                  if isinstance(msg, Unreadable) else (msg.method, msg.params))
                if stray is not None and stray(method, params):
                    continue  # counted and charged; it reaches no one
            elif self.asked is not None:
                if isinstance(msg, (JSONRPCResponse, JSONRPCError)) and not self.asked(msg.id):
                    self.budget.spend()
            return item

    def __aiter__(self) -> PacedReceive:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> PacedReceive:
        await self.inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self.inner.__aexit__(*exc)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def __getattr__(self, name: str) -> Any:  # e.g. ``last_context``: the sender's context of its message
        return getattr(self.inner, name)


@asynccontextmanager
async def paced(transport: Any, budget: NoticeBudget, asked: Callable[[Any], bool] | None = None,
                stray: Callable[[Any, Any], bool] | None = None) -> AsyncIterator[tuple[Any, Any]]:
    """``transport`` (an SDK transport: an async context of its read and write streams), its read stream
    paced by ``budget``; ``asked(id)``: whether a request of that id waits for its answer;
    ``stray(method, params)``: whether a notice reaches no one (a progress no waiting call's own, one the
    session cannot take: then counted and charged by it)."""
    async with transport as (read, write):
        yield PacedReceive(read, budget, asked, stray), write


def progress_of(params: Any) -> tuple[Any, bool]:
    """A progress notice's token (None if it has none) and whether its values are a report a call may be
    given (a finite number, a finite total or none): as the SDK's dispatcher and the lean readers take one."""
    if not isinstance(params, dict):
        return None, False
    p, total = params.get("progress"), params.get("total")
    return params.get("progressToken"), finite_number(p) and (total is None or finite_number(total))


def finite_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and abs(v) != float("inf")
