"""While a store is degraded, one fresh connection at a time tries its server; the reads that come meanwhile
share that attempt's word instead of each waiting out its own.

A read pool backs off its reconnects while the server is down, so a read that waited on it waited its whole
timeout (seconds) on every call's way, past a balancer's patience; and reads that each tried the server
themselves would each wait a connect timeout when it does not answer (a host gone silent), queued behind one
another on the few reader threads. The attempt is refused at once when the server is down and ends within
the connect timeout when it does not answer: every read waiting on it ends then too, with its cause. Its word
is only whether the server took a connection (each read then runs on its own), so a slow statement holds
nobody up.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from typing import TypeAlias

from sentinel_mcp.storage.database import StorageError

Attempt: TypeAlias = "concurrent.futures.Future[StorageError | None]"  # its word: None (connected) or why not


class ServerTrial:
    def __init__(self, wait: float) -> None:
        self.wait = wait  # a bound on waiting for the word (the attempt itself is bounded by its timeout)
        self._lock = threading.Lock()
        self._running: Attempt | None = None

    @property
    def running(self) -> Attempt | None:
        return self._running

    def enter(self) -> tuple[bool, Attempt]:
        """(True, attempt): the caller tries the server and must ``settle`` it; (False, attempt): another
        caller is trying, wait for its word."""
        with self._lock:
            if self._running is not None:
                return False, self._running
            attempt: Attempt = concurrent.futures.Future()
            attempt.set_running_or_notify_cancel()  # a waiter that gives up cannot cancel it for the others
            self._running = attempt
            return True, attempt

    def settle(self, attempt: Attempt, failed: StorageError | None) -> None:
        with self._lock:
            if self._running is attempt:
                self._running = None
        attempt.set_result(failed)

    def word(self, attempt: Attempt, cause: str) -> StorageError | None:
        """Blocking: the attempt's word (a reader thread, or a blocking caller)."""
        try:
            return attempt.result(timeout=self.wait)
        except concurrent.futures.TimeoutError:
            return StorageError(cause)

    async def heard(self, attempt: Attempt, cause: str) -> StorageError | None:
        """The attempt's word, awaited on the event loop (no reader thread held while waiting)."""
        try:
            return await asyncio.wait_for(asyncio.wrap_future(attempt), self.wait)
        except asyncio.TimeoutError:
            return StorageError(cause)
