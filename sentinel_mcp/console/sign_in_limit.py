"""How many console secrets may be guessed: per client address, and across all of them.

Before, past 20 wrong secrets a minute an address got 429 for its further wrong ones, but a right one still
signed in, so the secret was still checked on every try and the limit slowed no guesser. Now, past the limit
every sign-in by the form from that address, right or wrong, is refused unchecked until its block ends; each
block in a row is twice the last (1 min, 2, 4, ... up to an hour), and a quiet hour forgets them. A guesser
with many addresses (IPv6 hands out 2^64 to anybody: an address counts by its /64) meets a cap on all wrong
secrets together, past which the form takes nobody's for a block that doubles alike.

A right secret resets nothing (an address that a guesser shares with the person must not have its count
cleared by the person's sign-in). The owner is never locked out: a one-time sign-in link made on this
machine (``sentinel-mcp config console-link``, ``identity/console_link.py``) is 256 random bits, not a guess,
and is taken whatever the blocks.
"""

from __future__ import annotations

import ipaddress
import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field

WINDOW = 60.0  # seconds the wrong secrets are counted over
MAX_FAILED_LOGINS = 20  # wrong secrets one address may send in a window; the next blocks it
MAX_FAILED_GLOBAL = 100  # wrong secrets all addresses together may send in a window; the next blocks all
FIRST_BLOCK = 60.0
MAX_BLOCK = 3600.0
MAX_FAILING_ADDRESSES = 4096  # addresses remembered (the oldest forgotten first; the global cap holds still)


@dataclass
class _Record:
    """One address's (or everybody's) wrong secrets in the window and its blocks in a row."""

    times: deque[float] = field(default_factory=deque)
    strikes: int = 0  # blocks in a row: the next lasts FIRST_BLOCK * 2**strikes (at most MAX_BLOCK)
    blocked_until: float = 0.0
    last: float = -math.inf  # the last wrong secret or block: a quiet MAX_BLOCK after it forgets the strikes

    def wait(self, now: float) -> float:
        return max(0.0, self.blocked_until - now)

    def fail(self, now: float, limit: int) -> None:
        if now - self.last > MAX_BLOCK:
            self.strikes = 0
        self.last = now
        while self.times and self.times[0] <= now - WINDOW:
            self.times.popleft()
        self.times.append(now)
        if len(self.times) > limit:
            self.blocked_until = now + min(FIRST_BLOCK * 2.0**self.strikes, MAX_BLOCK)
            self.strikes += 1
            self.times.clear()  # counted afresh once the block ends


def address_key(address: str | None) -> str:
    """What an address counts as: itself, or its /64 for IPv6 (one subscriber's whole prefix)."""
    try:
        ip = ipaddress.ip_address(address or "")
    except ValueError:
        return address or "?"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


class SignInLimit:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._addresses: OrderedDict[str, _Record] = OrderedDict()
        self._everyone = _Record()

    def wait(self, address: str | None) -> float:
        """Seconds until a sign-in by the form from ``address`` is checked again (0: now)."""
        now = self._clock()
        own = self._addresses.get(address_key(address))
        return max(self._everyone.wait(now), own.wait(now) if own is not None else 0.0)

    def failed(self, address: str | None) -> None:
        """A wrong secret (or sign-in link) from ``address``."""
        now, key = self._clock(), address_key(address)
        record = self._addresses.pop(key, None) or _Record()
        record.fail(now, MAX_FAILED_LOGINS)
        self._addresses[key] = record  # the newest last: the oldest is forgotten first
        while len(self._addresses) > MAX_FAILING_ADDRESSES:
            self._addresses.popitem(last=False)
        self._everyone.fail(now, MAX_FAILED_GLOBAL)
