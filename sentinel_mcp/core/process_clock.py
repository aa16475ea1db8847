"""The one clock every time to live in a process is measured by: wall time that never goes back.

The wall clock may be set back (NTP stepping a fast clock, ``date -s``, a VM restored from a snapshot); a TTL
compared with it then lasts as long as the step. This clock follows the wall clock forward (so a device's
sleep, which the monotonic clock does not count, still ages facts) and, when the wall clock goes back, goes on
from its last reading by the monotonic clock instead. Within a process it never goes back; across a restart
it cannot know what happened, so a stored time later than ``now()`` is not to be trusted (``fact_store``
drops facts established in the future).

Not for timestamps shown to people or written to the audit log: those say what the wall clock said.
"""

from __future__ import annotations

import threading
import time


class ProcessClock:
    """Seconds since the epoch, like ``time.time()``, never smaller than a value it returned before."""

    __slots__ = ("_base", "_lock")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._base = time.time() - time.monotonic()  # now() = base + monotonic, base moved only forward

    def now(self) -> float:
        wall, mono = time.time(), time.monotonic()
        with self._lock:
            if wall - mono > self._base:  # the wall clock is ahead of us: follow it (never back)
                self._base = wall - mono
            return self._base + mono


CLOCK = ProcessClock()


def now() -> float:
    """The process clock's reading (``CLOCK``; a test may put a fresh one in its place)."""
    return CLOCK.now()
