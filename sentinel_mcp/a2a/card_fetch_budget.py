"""How often announcements may make Sentinel fetch a card. Each change of an announcement is a new one to
check, and an announcer can change its record as often as it likes: unbounded, a name flapped between two TXT
records made a card fetch per change (eight at a time, no rate). Two bounds, both counted:

- per instance name, a backoff: after a name's card was fetched, its next fetch waits ``FIRST_WAIT``
  seconds, doubling with each fetch while the name keeps changing (up to ``LONGEST_WAIT``); a name quiet for
  ``LONGEST_WAIT`` starts afresh. An honest peer's record changes rarely, and a listed peer's card is
  fetched and checked again at each send to it anyway (``announced_peer_card.py``): a deferred re-check
  loses nothing.
- per machine, a rate: ``BURST`` fetches, then one per ``FIRST_WAIT`` seconds, however many names announce
  it, at whichever port or scheme, under whichever spelling of its address (``fetch_key``: an IPv4-mapped
  IPv6 address is its IPv4 one, every loopback and unspecified address is this machine, an IPv6 address counts
  as its /64, which one host may use all of). Keyed by (scheme, address, port), each port an announcer
  rotated through got a fresh burst.
- per (machine, port), within the machine's rate: ``PORT_BURST`` fetches, then one per ``PORT_EVERY``
  seconds. Several agents on one machine (a developer's laptop: all of them this machine, on loopback) share
  its rate, and one chatty announcer took all of it (at most a quarter now), starving the others' discovery.
  An announcer rotating ports gets no more from the machine: its rate still bounds them all.
- in all, a rate: ``TOTAL_BURST`` fetches, then one per ``TOTAL_EVERY`` seconds, however many machines: an
  announcer naming ever new addresses of the allowed networks (or pushing a machine out of the bounded table)
  gets no fresh allowance either.

A fetch that must wait is deferred, not dropped: the name waits its turn (``card_fetch_turns.py``: a
machine's fetches go to its ports in turn) and the browser resolves it again then (reading the record as it
is then), so the last announcement is the one checked. Both tables are bounded (the least
recently used forgotten first)."""


from __future__ import annotations

import ipaddress
import time
from collections import OrderedDict
from typing import Callable
from urllib.parse import urlsplit

from sentinel_mcp.core.errors import A2AError
from sentinel_mcp.core.untrusted_address import AddressRefused, Kind, parse_host

FIRST_WAIT = 30.0
LONGEST_WAIT = 3600.0
BURST = 8
REMEMBERED = 1024  # names, and machines, kept
TOTAL_BURST = 64  # a link full of honest agents starting at once is checked at once
TOTAL_EVERY = 2.0
THIS_MACHINE = "this machine"
# per (machine, port): a smaller burst, refilled slower than the machine is, so one port cannot take all of it
PORT_BURST = BURST // 2
PORT_EVERY = FIRST_WAIT * 4


def fetch_key(where: str) -> str:
    """The machine a card fetch from ``where`` (a base URL, or a host as a URL or mDNS spells it) reaches, as
    the rate counts it."""
    host = urlsplit(where).hostname if "//" in where else where.removeprefix("[").removesuffix("]")
    try:
        read = parse_host((host or "").partition("%")[0])  # (a zone names the link, not another machine)
    except AddressRefused:
        return "?" + (host or "")[:100]  # (never fetched: verify_peer reads every address first)
    if read.address is None:
        return f"name:{read.name}"
    if read.kind is Kind.THIS_HOST:
        return THIS_MACHINE
    if isinstance(read.address, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((read.address, 64), strict=False))
    return str(read.address)


class CardFetchBudget:
    def __init__(self, clock: Callable[[], float] = time.monotonic, burst: int = BURST,
                 total_burst: int = TOTAL_BURST, first_wait: float = FIRST_WAIT) -> None:
        self._clock = clock
        self.burst, self.total_burst, self.first_wait = burst, total_burst, first_wait
        # per name: its fetches in a row, and the last one's time
        self._names: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._endpoints: OrderedDict[str, tuple[float, float]] = OrderedDict()  # tokens, when counted
        self._ports: OrderedDict[str, tuple[float, float]] = OrderedDict()  # per (machine, port): the same
        self._all = (float(total_burst), self._clock())  # every machine's fetches: tokens, when counted

    @property
    def clock(self) -> Callable[[], float]:
        return self._clock

    def wait(self, name: str, endpoint: str) -> float:
        """Seconds until ``name``'s card may be fetched from ``endpoint`` (a base URL; 0: now)."""
        now = self._clock()
        every = TOTAL_EVERY * max(0.0, 1 - self._all_tokens(now))
        port = self._port_tokens(port_key(endpoint), now)
        return max(self._name_wait(name, now), self._endpoint_wait(fetch_key(endpoint), now), every,
                   0.0 if port >= 1 else (1 - port) * PORT_EVERY)

    def took(self, name: str, endpoint: str) -> None:
        """A fetch for ``name`` from ``endpoint`` is made now."""
        now = self._clock()
        streak, last = self._names.get(name, (0, now))
        streak = 1.0 if now - last > LONGEST_WAIT else streak + 1
        _remember(self._names, name, (streak, now))
        machine = fetch_key(endpoint)
        tokens = self._tokens(machine, now)
        _remember(self._endpoints, machine, (tokens - 1, now))
        port = port_key(endpoint)
        _remember(self._ports, port, (self._port_tokens(port, now) - 1, now))
        self._all = (self._all_tokens(now) - 1, now)

    def _all_tokens(self, now: float) -> float:
        tokens, at = self._all
        return min(float(self.total_burst), tokens + max(0.0, now - at) / TOTAL_EVERY)

    def _name_wait(self, name: str, now: float) -> float:
        streak, last = self._names.get(name, (0, now))
        if streak == 0 or now - last > LONGEST_WAIT:
            return 0.0
        return max(0.0, last + min(LONGEST_WAIT, self.first_wait * 2 ** (streak - 1)) - now)

    def _tokens(self, endpoint: str, now: float) -> float:
        tokens, at = self._endpoints.get(endpoint, (float(self.burst), now))
        return min(float(self.burst), tokens + (now - at) / FIRST_WAIT)

    def _port_tokens(self, port: str, now: float) -> float:
        tokens, at = self._ports.get(port, (float(PORT_BURST), now))
        return min(float(PORT_BURST), tokens + (now - at) / PORT_EVERY)

    def _endpoint_wait(self, endpoint: str, now: float) -> float:
        tokens = self._tokens(endpoint, now)
        return 0.0 if tokens >= 1 else (1 - tokens) * FIRST_WAIT


def port_key(endpoint: str) -> str:
    """The (machine, port) a fetch from ``endpoint`` reaches: one agent among the machine's."""
    try:
        port = urlsplit(endpoint).port if "//" in endpoint else None
    except ValueError:
        port = None
    return f"{fetch_key(endpoint)} port {port}"


class FetchDeferred(A2AError):
    """A card fetch from ``endpoint`` that must wait (``seconds`` at least, or its turn): the announcement is
    looked at again then, not rejected."""

    def __init__(self, seconds: float, endpoint: str = "") -> None:
        super().__init__(f"card fetch deferred {seconds:.0f} s: the announcement changes too often")
        self.seconds, self.endpoint = seconds, endpoint


def _remember(table: OrderedDict[str, tuple[float, float]], key: str, value: tuple[float, float]) -> None:
    table[key] = value
    table.move_to_end(key)
    while len(table) > REMEMBERED:
        table.popitem(last=False)
