"""How many notices reaching no client an upstream may send a second before it is read more slowly.

Each notice is dropped and counted (a progress report for a call that has ended or whose client asked for
none, a log line naming no call, a resource update nobody subscribed to, a list change:
``upstream_relays.py``, ``upstream_listing.py``, ``upstream_calls.py``; a line that is no message, an answer
to no request waiting: ``paced_reading.py``), yet its line is still read, parsed and handed on: an stdio
upstream writing them as fast as its pipe took them held the event loop for most of its time (every other
client's calls, through every other upstream, went at a third of their pace) and queued its own answers behind
the flood. Past ``BURST`` notices and then ``PER_SECOND``, the reading of the upstream pauses until the budget
has room again, down every road: the lean stdio tap (``lean_stdio._TappedStdout``), a lean HTTP call's event
stream (``lean_upstream``), the SDK transport's hand over to its session (``paced_reading.py``: stdio, SSE,
streamable HTTP). The pipe or socket fills and the upstream waits at its own write, so the flood costs the
gateway at most the budget's rate; it costs the upstream its own answers' time, and nothing is dropped for the
pause. Said in the log at a cadence and counted (``pauses``: /metrics, ``UpstreamHealth.notice_pauses``); when
the upstream behaves again the budget fills up and it is read as before.
"""

from __future__ import annotations

import logging
import time

import anyio

from sentinel_mcp.core.log_cadence import worth_saying

log = logging.getLogger(__name__)

# far above what a server says to nobody in earnest (a log line a call, a change now and then); a burst of
# 3,000 change notices during a refresh is taken whole (test_listing_bounds: paused past 1,000, the upstream's
# next call waited 20 s); a sustained flood then costs the loop some 0.1 s a second
PER_SECOND = 100.0
BURST = 5_000


class NoticeBudget:
    """One upstream's notices to nobody, as a token bucket; ``pause_until`` (monotonic, 0: never) is when its
    stdout may be read again."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.per_second = PER_SECOND
        self.burst = BURST
        self._room = float(BURST)
        self._at = time.monotonic()
        self.pause_until = 0.0
        self.pauses = 0  # times its reading paused, since the start
        self.charged = 0  # notices charged, since the start
        # messages read off the upstream on the roads the budget paces (the SDK's transports, the lean HTTP
        # calls' event streams), notices or not, since the start: a sign of life (``Upstream._pinged``)
        self.heard = 0

    def spend(self, n: int = 1) -> None:
        """``n`` notices that reach no client: past the budget, its reading pauses until there is room."""
        self.charged += n
        now = time.monotonic()
        self._room = min(float(self.burst), self._room + (now - self._at) * self.per_second) - n
        self._at = now
        if self._room >= 0:
            return
        if self.pause_until <= now:  # a pause starts
            self.pauses += 1
            if worth_saying(self.pauses - 1, self.pauses):
                log.warning("upstream %s: more than %g notices a second that reach no client: its reading "
                            "paused (%d times so far)", self.name, self.per_second, self.pauses)
        self.pause_until = now - self._room / self.per_second

    def wait(self) -> float:
        """Seconds the upstream's stdout is not to be read now (0: read on)."""
        if not self.pause_until:
            return 0.0
        left = self.pause_until - time.monotonic()
        if left <= 0:
            self.pause_until = 0.0
            return 0.0
        return left

    async def paced(self) -> None:
        """Wait out a pause, if one is on (a reader's step before its next read)."""
        if self.pause_until:
            wait = self.wait()
            if wait > 0:
                await anyio.sleep(wait)
