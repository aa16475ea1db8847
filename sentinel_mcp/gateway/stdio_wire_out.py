"""The stdio front's output: lines written without ever blocking the event loop, and a bound on the lines
waiting to be written.

A stdout pipe is blocking as the client hands it over. A client that stopped reading it (hung, busy, or
hostile) filled its 64 KiB and the next ``os.write`` held the event loop's thread in the kernel: nothing else
ran, SIGTERM was never handled (the gateway could only be killed), and no timer or upstream ping fired. Here
the pipe is made non-blocking while it is served and a full pipe is waited on through the loop. What waits
unwritten is bounded instead: past ``UNWRITTEN_LINES`` lines the transport stops reading requests
(``room``) until the client reads again, so a client that writes without reading holds a bounded amount of
the gateway's memory (every request it sent would otherwise be served and its answer kept).
"""

from __future__ import annotations

import asyncio
import os
import selectors
import stat
from typing import Callable

import anyio

UNWRITTEN_LINES = 256  # as a legacy SSE session's backlog (app/sse_backlog.py)


def pollable(fd: int) -> bool:
    """Whether the event loop can wait on ``fd``: a pipe, socket or terminal can; a regular file, and a
    character device such as /dev/null (``serve < /dev/null``), cannot (epoll refuses them with EPERM, and
    the loop would only say so in a callback, leaving the gateway waiting on nothing)."""
    mode = os.fstat(fd).st_mode
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)):
        return False
    probe = selectors.DefaultSelector()
    try:
        probe.register(fd, selectors.EVENT_READ)
        return True
    except (PermissionError, ValueError, OSError):
        return False
    finally:
        probe.close()


class WireOut:
    """Writes whole lines to ``fd``, one at a time, and says when too many wait (module doc)."""

    def __init__(self, fd: int, bound: int = UNWRITTEN_LINES) -> None:
        self.fd = fd
        self.bound = bound
        self._lock = anyio.Lock(fast_acquire=True)  # uncontended: no extra turn of the loop per line
        self._was_blocking = os.get_blocking(fd)
        # a file or /dev/null never makes a write wait (and the loop cannot poll it): left as it is
        if pollable(fd):
            os.set_blocking(fd, False)
        self.waiting = 0  # lines handed to ``write`` and not written yet
        # lines handed to a writer in front of ``write`` (the SDK's write stream) and not written yet
        self.queued: Callable[[], int] = lambda: 0
        self._room = asyncio.Event()
        self._room.set()

    async def write(self, text: str) -> None:
        data = (text + "\n").encode("utf-8", "replace")
        lock = self._lock
        if not lock.locked():
            # nobody is part-way through a line: the line written at once, as the loop below would. The lock
            # is taken only if the pipe is full and the rest must wait through the loop (until then nothing
            # else runs, so nobody can come between); a whole line written at once never takes it (anyio's
            # acquire and release each ask for the current task: a getpid on 3.11; issue 21)
            try:
                try:
                    n = os.write(self.fd, data)
                except BlockingIOError:
                    n = 0
                if n < len(data):
                    lock.acquire_nowait()  # free: nothing ran since it was seen free
                    self.waiting += 1
                    try:
                        await self._rest(memoryview(data)[n:])
                    finally:
                        self.waiting -= 1
                        lock.release()
            finally:
                self.moved()
            return
        self.waiting += 1
        try:
            async with lock:
                await self._rest(memoryview(data))
        finally:
            self.waiting -= 1
            self.moved()

    async def _rest(self, view: memoryview) -> None:
        """What is left of a line, written as the client reads; the caller holds the lock."""
        while view:
            try:
                n = os.write(self.fd, view)
            except BlockingIOError:  # the client is not reading: wait through the loop
                await anyio.wait_writable(self.fd)
                continue
            view = view[n:]

    def over(self) -> bool:
        return self.waiting + self.queued() > self.bound

    def moved(self) -> None:
        """Something was written (or given up): a reader waiting for room goes on once there is room."""
        if not self._room.is_set() and not self.over():
            self._room.set()

    async def room(self) -> None:
        """Return once at most ``bound`` lines wait to be written."""
        while self.over():
            self._room.clear()
            await self._room.wait()

    def close(self) -> None:
        """The descriptor as it was found (shared with whoever else holds this pipe or terminal)."""
        try:
            os.set_blocking(self.fd, self._was_blocking)
        except OSError:
            pass
