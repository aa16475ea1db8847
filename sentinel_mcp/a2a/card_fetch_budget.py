"""How often announcements may make Sentinel fetch a card. Each change of an announcement is a new one to
check, and an announcer can change its record as often as it likes: unbounded, a name flapped between two TXT
records made a card fetch per change (eight at a time, no rate). Two bounds, both counted:

- per instance name, a backoff: after a name's card was fetched, its next fetch waits ``FIRST_WAIT``
  seconds, doubling with each fetch while the name keeps changing (up to ``LONGEST_WAIT``); a name quiet for
  ``LONGEST_WAIT`` starts afresh. An honest peer's record changes rarely, and a listed peer's card is
  fetched and checked again at each send to it anyway (``announced_peer_card.py``): a deferred re-check
  loses nothing.
- per endpoint (scheme, address, port), a rate: ``BURST`` fetches, then one per ``FIRST_WAIT`` seconds,
  however many names announce it.

A fetch that must wait is deferred, not dropped: the browser resolves the name again when it may (reading
the record as it is then), so the last announcement is the one checked. Both tables are bounded (the least
recently used forgotten first)."""


from __future__ import annotations

import time
from collections import OrderedDict
from typing import Callable

from sentinel_mcp.core.errors import A2AError

FIRST_WAIT = 30.0
LONGEST_WAIT = 3600.0
BURST = 8
REMEMBERED = 1024  # names, and endpoints, kept


class CardFetchBudget:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        # per name: its fetches in a row, and the last one's time
        self._names: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._endpoints: OrderedDict[str, tuple[float, float]] = OrderedDict()  # tokens, when counted

    def wait(self, name: str, endpoint: str) -> float:
        """Seconds until ``name``'s card may be fetched from ``endpoint`` (0: now)."""
        now = self._clock()
        return max(self._name_wait(name, now), self._endpoint_wait(endpoint, now))

    def took(self, name: str, endpoint: str) -> None:
        """A fetch for ``name`` from ``endpoint`` is made now."""
        now = self._clock()
        streak, last = self._names.get(name, (0, now))
        streak = 1.0 if now - last > LONGEST_WAIT else streak + 1
        _remember(self._names, name, (streak, now))
        tokens = self._tokens(endpoint, now)
        _remember(self._endpoints, endpoint, (tokens - 1, now))

    def _name_wait(self, name: str, now: float) -> float:
        streak, last = self._names.get(name, (0, now))
        if streak == 0 or now - last > LONGEST_WAIT:
            return 0.0
        return max(0.0, last + min(LONGEST_WAIT, FIRST_WAIT * 2 ** (streak - 1)) - now)

    def _tokens(self, endpoint: str, now: float) -> float:
        tokens, at = self._endpoints.get(endpoint, (float(BURST), now))
        return min(float(BURST), tokens + (now - at) / FIRST_WAIT)

    def _endpoint_wait(self, endpoint: str, now: float) -> float:
        tokens = self._tokens(endpoint, now)
        return 0.0 if tokens >= 1 else (1 - tokens) * FIRST_WAIT


class FetchDeferred(A2AError):
    """A card fetch that must wait (``seconds``): the announcement is looked at again then, not rejected."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"card fetch deferred {seconds:.0f} s: the announcement changes too often")
        self.seconds = seconds


def _remember(table: OrderedDict[str, tuple[float, float]], key: str, value: tuple[float, float]) -> None:
    table[key] = value
    table.move_to_end(key)
    while len(table) > REMEMBERED:
        table.popitem(last=False)
