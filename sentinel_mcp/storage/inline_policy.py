"""When a store lets a caller commit on its own thread (``SQLiteDatabase.write_inline``), judged from the
durations of its recent commits there.

Why: a commit on the caller's thread (the event loop) holds every other client for its length, so a slow or
stalled disk must send commits to the writer thread; but one outlier must not. The rule this replaced turned
inline commits off for 30 s after ONE commit over 20 ms: on a shared disk one slow ``fdatasync`` comes often,
and the gateway spent most of its loaded runs in the slower hand-off mode (~8 more context switches a call;
benchmarks/README.md, branch perf-inline). Now:

- off when ``SLOW_OF_WINDOW`` of the last ``WINDOW`` commits took over ``SLOW_S`` (a slow disk, not one
  outlier), or at once when one took over ``STALL_S`` (a stalled disk: the loop was held that long);
- off for ``OFF_FIRST_S``, then inline commits come back and probe the disk: until ``WINDOW`` commits in a
  row were fast, any slow one turns them off again for twice as long (up to ``OFF_MAX_S``, the old rule's
  30 s), so a disk that stays slow costs the loop one slow commit a period, as before;
- after ``WINDOW`` fast commits in a row the back-off starts again from ``OFF_FIRST_S``.

Plain data, the clock passed in: the decisions are a function of the durations fed (tested as such).
"""

from __future__ import annotations

from collections import deque

WINDOW = 32  # the recent commits a decision looks at
SLOW_S = 0.02  # a commit slower than this held the caller's thread too long
SLOW_OF_WINDOW = 3  # this many of WINDOW: the disk is slow now, not one outlier
STALL_S = 0.1  # one commit slower than this: the disk stalls, off at once
OFF_FIRST_S = 1.0
OFF_MAX_S = 30.0


class InlinePolicy:
    __slots__ = ("_slow", "_slow_count", "_off_until", "_next_off", "trips")

    def __init__(self) -> None:
        self._slow: deque[bool] = deque(maxlen=WINDOW)  # of the last WINDOW commits, which were slow
        self._slow_count = 0
        self._off_until = 0.0
        self._next_off = OFF_FIRST_S
        self.trips = 0  # how often inline commits were turned off (a counter for benchmarks and tests)

    def allows(self, now: float) -> bool:
        return now >= self._off_until

    def off_until(self) -> float:
        return self._off_until

    def record(self, took: float, now: float) -> float:
        """One commit on the caller's thread took ``took`` seconds, ending at ``now``: the seconds inline
        commits are now off for (0.0: they stay on)."""
        slow = took > SLOW_S
        if len(self._slow) == WINDOW and self._slow[0]:
            self._slow_count -= 1
        self._slow.append(slow)
        if not slow:
            if self._slow_count == 0 and len(self._slow) == WINDOW:
                self._next_off = OFF_FIRST_S  # a whole window fast: the disk recovered
            return 0.0
        self._slow_count += 1
        probing = self._next_off > OFF_FIRST_S  # tripped before, and no whole window fast since
        if took <= STALL_S and self._slow_count < SLOW_OF_WINDOW and not probing:
            return 0.0
        off = self._next_off
        self._next_off = min(off * 2, OFF_MAX_S)
        self._off_until = now + off
        self.trips += 1
        return off
