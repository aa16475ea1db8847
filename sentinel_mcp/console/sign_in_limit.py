"""How many console secrets may be guessed: per client address, across all of them, and per principal named.

Before, past 20 wrong secrets a minute an address got 429 for its further wrong ones, but a right one still
signed in, so the secret was still checked on every try and the limit slowed no guesser. Now, past the limit
every sign-in by the form from that address, right or wrong, is refused unchecked until its block ends; each
block in a row is twice the last (1 min, 2, 4, ... up to an hour), and a quiet hour forgets them. A guesser
with many addresses (IPv6 hands out 2^64 to anybody: an address counts by its /64) meets a cap on all wrong
secrets together, past which the form takes nobody's for a block that doubles alike.

A person may name their principal beside the secret. A named sign-in is counted against that name from its
address (``MAX_FAILED_PER_ADDRESS_AND_NAME`` a window, blocks doubling alike: that address's sign-ins under
that name refused) and against that name across every address (``MAX_FAILED_PER_NAME``, the bound on guesses
at any one principal's secret). One address alone never reaches the name's count (its own blocks stop it
first); many addresses do, and then the name is refused by the form to every browser but those the principal
signed in on before: a sign-in there carries a device token (``sign_in_devices.py``), unforgeable, bound to
the name, and is counted against that device alone (``MAX_FAILED_PER_DEVICE``). A flood at a known name thus
no longer locks its principal out of the browsers they use; a new browser waits for the block, the owner's
link still signs in.

Whether a name is a principal's cannot be learned: every name is counted alike, in a fixed table of
``NAME_SLOTS`` counts a name is placed in by a keyed digest (this process's random key). Before, real names
had a table of their own and made-up ones a bounded table whose oldest were forgotten: after 21 guesses at a
name and 4,096 made-up ones, the name was still blocked only if it was real. Nothing is forgotten from the
slots, so no flood of made-up names resets a real one's count; two names in one slot share a count (more
blocking, never fewer guesses), and nobody can choose which names share one.

A right secret resets nothing (an address that a guesser shares with the person must not have its count
cleared by the person's sign-in). The owner is never locked out: a one-time sign-in link made on this
machine (``sentinel-mcp config console-link``, ``identity/console_link.py``) is 256 random bits, not a guess,
and is taken whatever the blocks.
"""

from __future__ import annotations

import hashlib
import ipaddress
import math
import secrets
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

WINDOW = 60.0  # seconds the wrong secrets are counted over
MAX_FAILED_LOGINS = 20  # wrong secrets one address may send in a window; the next blocks it
MAX_FAILED_GLOBAL = 100  # wrong secrets all addresses together may send in a window; the next blocks all
FIRST_BLOCK = 60.0
MAX_BLOCK = 3600.0
MAX_FAILING_ADDRESSES = 4096  # addresses remembered (the oldest forgotten first; the global cap holds still)
MAX_FAILED_PER_NAME = 20  # wrong secrets sent under one name in a window, from all addresses
MAX_FAILED_PER_ADDRESS_AND_NAME = 10  # from one address under one name: below the name's, so one address
# alone never closes a name to others
MAX_FAILED_PER_DEVICE = 10  # under a name from a browser its principal signed in on (a stolen token: bounded)
NAME_SLOTS = 4096  # counts of names, every name in one by a keyed digest (none forgotten, none told apart)
MAX_FAILING_PAIRS = 4096  # (address, name) counts remembered, the oldest forgotten first (the name's holds)
MAX_FAILING_DEVICES = 4096  # devices' counts remembered, the oldest forgotten first


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
        self._slot_key = secrets.token_bytes(16)
        self._names: dict[int, _Record] = {}  # at most NAME_SLOTS
        self._pairs: OrderedDict[tuple[str, int], _Record] = OrderedDict()
        self._devices: OrderedDict[str, _Record] = OrderedDict()

    def _slot(self, name: str) -> int:
        digest = hashlib.blake2b(name.encode("utf-8", "surrogatepass"), key=self._slot_key, digest_size=8)
        return int.from_bytes(digest.digest(), "big") % NAME_SLOTS

    def wait(self, address: str | None, name: str | None = None, device: str | None = None) -> float:
        """Seconds until a sign-in by the form from ``address`` is checked again (0: now); under ``name``
        (a principal named beside the secret), until one under that name from there is; with ``device``
        (a device token valid for ``name``: ``sign_in_devices.py``), until one from that device is."""
        now = self._clock()
        if name is None:
            own = self._addresses.get(address_key(address))
            return max(self._everyone.wait(now), own.wait(now) if own is not None else 0.0)
        if device is not None:
            mine = self._devices.get(device)
            return mine.wait(now) if mine is not None else 0.0
        slot = self._slot(name)
        named, pair = self._names.get(slot), self._pairs.get((address_key(address), slot))
        return max(named.wait(now) if named is not None else 0.0, pair.wait(now) if pair is not None else 0.0)

    def failed(self, address: str | None, name: str | None = None, device: str | None = None) -> None:
        """A wrong secret (or sign-in link) from ``address``; under ``name``, counted against that name from
        that address and from all (with ``device``: against that device alone), not across addresses. Any
        name counts alike, a principal's or not."""
        now, key = self._clock(), address_key(address)
        _counted(self._addresses, key, now, MAX_FAILED_LOGINS, MAX_FAILING_ADDRESSES)
        if name is None:
            self._everyone.fail(now, MAX_FAILED_GLOBAL)
        elif device is not None:
            _counted(self._devices, device, now, MAX_FAILED_PER_DEVICE, MAX_FAILING_DEVICES)
        else:
            slot = self._slot(name)
            self._names.setdefault(slot, _Record()).fail(now, MAX_FAILED_PER_NAME)
            _counted(self._pairs, (key, slot), now, MAX_FAILED_PER_ADDRESS_AND_NAME, MAX_FAILING_PAIRS)


def _counted(table: OrderedDict[Any, _Record], key: Any, now: float, limit: int, most: int) -> None:
    """One wrong secret counted against ``key`` in a bounded table (the newest last: the oldest forgotten)."""
    record = table.pop(key, None) or _Record()
    record.fail(now, limit)
    table[key] = record
    while len(table) > most:
        table.popitem(last=False)
