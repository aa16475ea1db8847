"""How many console secrets may be guessed: per client address, across all of them, and per principal named.

Before, past 20 wrong secrets a minute an address got 429 for its further wrong ones, but a right one still
signed in, so the secret was still checked on every try and the limit slowed no guesser. Now, past the limit
every sign-in by the form from that address, right or wrong, is refused unchecked until its block ends; each
block in a row is twice the last (1 min, 2, 4, ... up to an hour), and a quiet hour forgets them. A guesser
with many addresses (IPv6 hands out 2^64 to anybody: an address counts by its /64) meets a cap on all wrong
secrets together, past which the form takes nobody's for a block that doubles alike.

A person may name their principal beside the secret. A named sign-in is counted against that name alone,
across every address (``MAX_FAILED_PER_NAME`` a window, blocks doubling alike), and only that name's blocks
refuse it: a secret signs in only under its own principal's name, so that count bounds the guesses at any one
principal's secret as the cap did, while a flood of unnamed guesses, or of guesses at other names, no longer
locks out a principal who names itself. Names no principal has are remembered apart, in a bounded table, so
made-up names never push a real principal's count out. A named wrong secret still counts against its address,
for the unnamed form.

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
MAX_FAILED_PER_NAME = 20  # wrong secrets sent under one principal's name in a window, from all addresses
MAX_UNKNOWN_NAMES = 4096  # names no principal has, remembered (the oldest forgotten first: none can sign in)


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
        # a principal's name: never forgotten (there are as many as the config has); any other name apart
        self._names: dict[str, _Record] = {}
        self._unknown_names: OrderedDict[str, _Record] = OrderedDict()

    def wait(self, address: str | None, name: str | None = None) -> float:
        """Seconds until a sign-in by the form from ``address`` is checked again (0: now); under ``name``
        (a principal named beside the secret), until one under that name is."""
        now = self._clock()
        if name is not None:
            own = self._names.get(name) or self._unknown_names.get(name)
            return own.wait(now) if own is not None else 0.0
        own = self._addresses.get(address_key(address))
        return max(self._everyone.wait(now), own.wait(now) if own is not None else 0.0)

    def failed(self, address: str | None, name: str | None = None, *, known: bool = False) -> None:
        """A wrong secret (or sign-in link) from ``address``; under ``name`` (``known``: a principal's),
        counted against that name, not across addresses."""
        now, key = self._clock(), address_key(address)
        record = self._addresses.pop(key, None) or _Record()
        record.fail(now, MAX_FAILED_LOGINS)
        self._addresses[key] = record  # the newest last: the oldest is forgotten first
        while len(self._addresses) > MAX_FAILING_ADDRESSES:
            self._addresses.popitem(last=False)
        if name is None:
            self._everyone.fail(now, MAX_FAILED_GLOBAL)
        elif known:
            self._names.setdefault(name, _Record()).fail(now, MAX_FAILED_PER_NAME)
        else:
            other = self._unknown_names.pop(name, None) or _Record()
            other.fail(now, MAX_FAILED_PER_NAME)
            self._unknown_names[name] = other
            while len(self._unknown_names) > MAX_UNKNOWN_NAMES:
                self._unknown_names.popitem(last=False)
