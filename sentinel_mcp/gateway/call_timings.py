"""Where a call's time went: the guard's own reasoning, the policy's fetches, waiting for the person's answer,
and the upstream (forward). Recorded in the call's audit row (``timings``, hashed like every column).

Measured where the time passes, without threading a parameter through every layer: the running call's
``CallTimings`` is a context variable, so the guard's fetches (nested calls with origin ``solver``, run in
tasks that copy the context) add their span to the call that needed them; the front adds the time a person
took to answer (a held call, a pushed question, an answer given in the console before the retry) before the
call it lets through is decided.
"""

from __future__ import annotations

import time
from contextvars import ContextVar
from typing import Any

_CURRENT: ContextVar["CallTimings | None"] = ContextVar("sentinel_call_timings", default=None)
_WAITED: ContextVar[float] = ContextVar("sentinel_waited_seconds", default=0.0)


class CallTimings:
    __slots__ = ("guard_s", "fetch_spans", "ask_s", "forward_s")

    def __init__(self, ask_s: float = 0.0) -> None:
        self.guard_s = 0.0  # the whole decision, fetches included (they are taken out when shown)
        self.fetch_spans: list[tuple[float, float]] = []
        self.ask_s = ask_s
        self.forward_s = 0.0

    def fetch_s(self) -> float:
        """Wall time of the fetches (they run concurrently: the union of their spans, not the sum)."""
        total, end = 0.0, float("-inf")
        for a, b in sorted(self.fetch_spans):
            if b <= end:
                continue
            total += b - max(a, end)
            end = b
        return total

    def as_dict(self) -> dict[str, float]:
        # milliseconds to 3 places; a zero (most calls fetch nothing and wait for nobody) is itself rounded
        fetch = self.fetch_s() if self.fetch_spans else 0.0
        guard = self.guard_s - fetch
        ask, forward = self.ask_s, self.forward_s
        return {"guard": round(guard * 1000, 3) if guard > 0.0 else 0.0,  # max(0.0, guard): nan too
                "fetch": round(fetch * 1000, 3) if fetch else fetch,
                "ask": round(ask * 1000, 3) if ask else ask,
                "forward": round(forward * 1000, 3) if forward else forward}


def current() -> CallTimings | None:
    return _CURRENT.get()


def enter(timings: CallTimings) -> Any:
    return _CURRENT.set(timings)


def leave(token: Any) -> None:
    _CURRENT.reset(token)


def waited(seconds: float) -> None:
    """The person took ``seconds`` to answer; the next call decided in this task carries it as ``ask``."""
    _WAITED.set(_WAITED.get() + max(0.0, seconds))


def take_waited() -> float:
    seconds = _WAITED.get()
    if seconds:
        _WAITED.set(0.0)
    return seconds


# the clock itself, not a function around it (five reads a call; issue 21)
now = time.perf_counter
