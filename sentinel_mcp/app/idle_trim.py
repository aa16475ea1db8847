"""Heap memory glibc keeps free, given back once the gateway goes quiet after work (issue 21's memory row).

A busy gateway frees most of what a call allocated, but glibc keeps the freed chunks inside its heaps (11
arenas here: the loop, the SQLite writer, the Prolog thread, the SDK's threads); after 100k calls ~3.4 MB of
the heaps were free and resident. ``malloc_trim(0)`` returns the free pages of every arena to the system
(measured: 1.9 MB of RSS at 100k calls, 0.3-0.5 MB at 1k and 20k; benchmarks/README.md). It walks every
arena under its lock, so it runs only when the process has been idle for a check after using CPU since the
last trim (never on the hot path), on a worker thread. Only where the C library has it (glibc); elsewhere
nothing runs. Chosen over ``M_TRIM_THRESHOLD`` (which trims only the top of the main heap, on every free)
and ``MALLOC_ARENA_MAX`` (an environment variable read before the first thread: not set for the gateway
process alone from here, and fewer arenas trade fragmentation for lock contention; not measured).
"""

from __future__ import annotations

import ctypes
import logging
import time
from typing import Callable

import anyio

log = logging.getLogger(__name__)

CHECK_SECONDS = 5.0
BUSY_CPU_SECONDS = 0.5  # CPU used since the last trim that makes another one worth its walk
IDLE_SHARE = 0.02  # at most this share of a core over the last check: idle
trims = 0  # done in this process (the benchmarks' memory probe reports it)


def malloc_trim() -> Callable[[int], int] | None:
    """The C library's ``malloc_trim``, or None where there is none (musl, macOS)."""
    try:
        fn = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_size_t]
    fn.restype = ctypes.c_int
    return fn  # type: ignore[no-any-return]


class IdleTrim:
    """When to trim: ``due(interval)`` after each check, from the process's CPU time."""

    def __init__(self, clock: Callable[[], float] = time.process_time) -> None:
        self.clock = clock
        self._last = clock()
        self._since = 0.0  # CPU seconds used since the last trim
        self.trims = 0

    def due(self, interval: float) -> bool:
        now = self.clock()
        used, self._last = now - self._last, now
        self._since += used
        if self._since < BUSY_CPU_SECONDS or used > IDLE_SHARE * interval:
            return False
        self._since = 0.0
        self.trims += 1
        return True


async def trim_when_idle() -> None:
    """Runs as long as the gateway: every ``CHECK_SECONDS``, a trim when due."""
    global trims
    fn = malloc_trim()
    if fn is None:
        return
    when = IdleTrim()
    while True:
        await anyio.sleep(CHECK_SECONDS)
        if when.due(CHECK_SECONDS):
            await anyio.to_thread.run_sync(fn, 0)
            trims += 1
            log.debug("idle: glibc's free heap memory returned (trim %d)", trims)
