"""Each principal's calls a minute: a token bucket per principal, so one caller (a looping agent, a leaked
token, a peer) cannot spend another's share of the upstreams' quota or the gateway's time.

``sentinel.principals[].calls_per_minute`` sets a principal's rate, ``sentinel.policy.calls_per_minute`` the
rate of every principal that sets none (A2A keys and ``anonymous`` included); the owner and Sentinel's own
calls are never limited. A bucket holds ``burst`` calls (``principals[].burst``; default: a minute's worth)
and refills at the rate; a call that finds it empty is refused at once,
saying when the next one will be taken (a wait would hold the connection and the caller's other calls).
Tool calls, resource reads, prompts and completions count; the policy's own look-ups do not (they are part of
the call that needed them).
"""

from __future__ import annotations

import time

MAX_BUCKETS = 10_000  # principals are named by the config, A2A keys and certificates: a bound all the same


class CallRates:
    def __init__(self, rates: dict[str, int], default: int | None, burst: dict[str, int] | None = None,
                 exempt: tuple[str, ...] = ()) -> None:
        self.rates = dict(rates)  # principal -> calls a minute
        self.default = default
        self.burst = dict(burst or {})
        self.exempt = frozenset(exempt)
        self._now = time.monotonic
        self._buckets: dict[str, tuple[float, float]] = {}  # principal -> (tokens, at)
        self.refused = 0  # calls refused past a rate, since the start (/metrics)

    def rate_of(self, name: str) -> int | None:
        return None if name in self.exempt else self.rates.get(name, self.default)

    def take(self, name: str) -> float | None:
        """Take one call of ``name``'s rate: None, or the seconds until one will be taken (refused)."""
        rate = self.rate_of(name)
        if rate is None:
            return None
        size = float(self.burst.get(name, rate))
        now = self._now()
        tokens, at = self._buckets.pop(name, (size, now))  # popped and put back: the dict is in use order
        tokens = min(size, tokens + (now - at) * rate / 60.0)
        if tokens < 1.0:
            self._buckets[name] = (tokens, now)
            self.refused += 1
            return (1.0 - tokens) * 60.0 / rate
        self._buckets[name] = (tokens - 1.0, now)
        if len(self._buckets) > MAX_BUCKETS:  # the least recently used (a bucket forgotten is a full one)
            del self._buckets[next(iter(self._buckets))]
        return None
