"""Browsing ``_a2a._tcp.local.`` for peers: each announced instance is resolved over mDNS and its card
checked (``discovery.verify_peer``) before it is listed, a few at a time (``discovery.MAX_RESOLVING``,
``MAX_PENDING``): anyone on the link can announce names.

Anyone can also say goodbye for any name (its records again with TTL 0; nothing in mDNS says who owns a
name, and a packet's source address is the sender's word), or announce a listed name again elsewhere: either
removed (or replaced) that listed peer at once. So both are a reason to look, not a verdict: the peer's card
is fetched again where it was checked (within the card fetch budget, like an announcement's), and the peer
goes only when it no longer checks out there (then a new announcement of its name is checked as any other:
a goodbye's check is an announcement's, so one heard while it waited its turn is not lost).

A name announced while ``MAX_PENDING`` checks are queued waits its turn, not dropped: dropped, a real peer
announced during a flood was never listed (until it announced again, maybe an hour later). At most
``MAX_LATER`` names wait (when more come, the announcer with the most waiting gives one up:
``waiting_names.py``), each for at most ``LATER_FOR`` seconds,
and they are looked at oldest first as the queue drains.

A name whose card fetch the budget deferred gives its place in the queue back and waits its turn
(``card_fetch_turns.py``): a machine's fetches go to its ports in turn. Before, it slept in its place, and
one announcer's deferred names held the whole queue (honest agents announced after them waited beyond it,
and were forgotten before their turn came)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING, Any, Awaitable, Callable
from urllib.parse import urlsplit

from sentinel_mcp.a2a.announced_card_client import AnnouncedCardClient
from sentinel_mcp.a2a.card_fetch import PeerRejected
from sentinel_mcp.a2a.card_fetch_budget import CardFetchBudget, FetchDeferred, fetch_key
from sentinel_mcp.a2a.card_fetch_turns import FetchTurns
from sentinel_mcp.a2a.card_signature import NO_KEYS, CardKeys
from sentinel_mcp.a2a.discovery import (CROWDED, ITSELF, MAX_NAMES_PER_ENDPOINT, MAX_PENDING, MAX_RESOLVING,
                                        SERVICE_TYPE, PeerRegistry, _zeroconf, verify_peer)
from sentinel_mcp.a2a.listed_peers import NO_LISTED, ListedPeers
from sentinel_mcp.a2a.scheduled_refreshes import PRUNE_EVERY, prune
from sentinel_mcp.a2a.waiting_names import MAX_LATER as MAX_LATER, UNREAD, WaitingNames  # (MAX_LATER: told)
from sentinel_mcp.a2a.peer_networks import LOOPBACK, IPNetwork, names_this_host
from sentinel_mcp.tls.settings import ClientTLS

if TYPE_CHECKING:
    from zeroconf import ServiceStateChange
    from zeroconf.asyncio import AsyncServiceBrowser, AsyncZeroconf

log = logging.getLogger(__name__)

LATER_FOR = 600.0  # seconds a name waits for its turn before it is forgotten (announced again, it is heard)
# names whose fetch turn came may pass a full queue by this many (a flood's names do not hold them back)
GRANTED_OVER = MAX_RESOLVING
TURN_TICK = 1.0  # seconds between looks at the turns while names wait (their rate's time may come meanwhile)
Check = Callable[[str], Awaitable[FetchDeferred | None]]  # a name checked: deferred, or done


class PeerBrowser:
    """Browses ``_a2a._tcp.local.``; each new instance is resolved and verified before it is listed."""

    def __init__(
        self,
        zc: AsyncZeroconf,
        registry: PeerRegistry,
        exclude: set[str] | None = None,
        resolve_timeout_ms: int = 3000,
        tls: ClientTLS | None = None,
        allow_loopback_plaintext: bool = False,
        networks: tuple[IPNetwork, ...] = LOOPBACK,
        keys: CardKeys = NO_KEYS,
        listed: ListedPeers = NO_LISTED,
        fetches: CardFetchBudget | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.zc = zc
        self.allow_loopback_plaintext = allow_loopback_plaintext
        self.networks, self.keys, self.listed = networks, keys, listed
        self.registry = registry
        self.exclude = exclude or set()
        self.resolve_timeout_ms = resolve_timeout_ms
        self._browser: AsyncServiceBrowser | None = None
        self._jobs: set[asyncio.Task[None]] = set()
        self._pending: set[str] = set()  # names whose resolution is queued or under way (one job per name)
        self._slots = asyncio.Semaphore(MAX_RESOLVING)
        # a name whose fetch turn came is checked in a slot of its own: behind the queue's (a flood's slow
        # checks), its machine's turn was held meanwhile and spent before its check began (``GRANT_FOR``)
        self._granted_slots = asyncio.Semaphore(GRANTED_OVER)
        self._granted: set[str] = set()  # names whose fetch turn came, checked or about to be
        self._fetches = fetches or CardFetchBudget()  # how often announcements may make it fetch a card
        self._turns = FetchTurns(self._fetches)  # names whose card fetch that budget deferred, in turn
        self._turn = asyncio.Event()  # a name deferred, or a place freed: the turns are looked at
        self._taker: asyncio.Task[None] | None = None
        # names heard while the queue was full: their check, and when they were heard (oldest first)
        self._later = WaitingNames()
        self._clock = clock  # (how long a name has waited)
        self._heard = 0  # changes heard: zeroconf's refresh schedule is pruned every PRUNE_EVERY of them
        # an announcement chose the address: Sentinel's client certificate goes only to a server that proved
        # itself first (``announced_card_client.py``)
        self._http = AnnouncedCardClient(tls)

    async def start(self) -> None:
        loop = asyncio.get_running_loop()

        def on_change(zeroconf: Any, service_type: str, name: str, state_change: ServiceStateChange) -> None:
            loop.call_soon_threadsafe(self._changed, name, state_change)

        # QM (multicast answers): several mDNS stacks share port 5353 on one host (SO_REUSEPORT), and a
        # unicast answer to a QU question reaches only one of them, maybe not the asker
        zeroconf = _zeroconf()
        self._browser = zeroconf.asyncio.AsyncServiceBrowser(
            self.zc.zeroconf, [SERVICE_TYPE], handlers=[on_change], question_type=zeroconf.DNSQuestionType.QM
        )
        self._taker = asyncio.create_task(self._take_turns(), name="a2a-card-fetch-turns")

    async def settle(self, timeout: float) -> None:
        """Wait (at most ``timeout`` seconds) for the resolutions already under way."""
        if self._jobs:
            await asyncio.wait(set(self._jobs), timeout=timeout)

    def _changed(self, name: str, change: ServiceStateChange) -> None:
        self._heard += 1
        if self._heard % PRUNE_EVERY == 0 and self._browser is not None:
            prune(self._browser, self.zc.zeroconf.cache)
        if name in self.exclude:
            return
        if change is _zeroconf().ServiceStateChange.Removed:
            self.registry.rejected.pop(name, None)
            if name in self.registry.peers:  # anyone's word: its card is checked again (``_resolve``)
                self._queue(name, self._resolve)
            return
        self._queue(name, self._resolve)

    @property
    def pending(self) -> frozenset[str]:
        """The names whose check is queued or under way."""
        return frozenset(self._pending)

    @property
    def deferred(self) -> frozenset[str]:
        """The names whose card fetch the budget deferred, waiting their turn."""
        return self._turns.names()

    @property
    def waiting(self) -> frozenset[str]:
        """The names heard while the queue was full, waiting for a place in it."""
        return self._later.names()

    def _queue(self, name: str, check: Check, granted: bool = False) -> None:
        """``granted``: the name's fetch turn came (``_take_turns``)."""
        if name in self._pending or name in self._later or (name in self._turns and not granted):
            if granted and name not in self._pending:  # (its turn, unused, holds its machine: passed on)
                self._turns.done(name)
            return  # its check is queued, under way or waiting: it reads the record as it is then
        if len(self._pending) >= MAX_PENDING + (GRANTED_OVER if granted else 0):
            if granted:  # (its turn cannot be used from here: its machine's next passes on)
                self._turns.done(name)
            self.registry.ignored += 1
            self._later.add(name, check, self._clock(), self._machine_of(name))
            return
        self._pending.add(name)
        if granted:
            self._granted.add(name)
        job = asyncio.ensure_future(self._in_turn(name, check, granted))
        self._jobs.add(job)
        job.add_done_callback(self._jobs.discard)

    async def _in_turn(self, name: str, check: Check, granted: bool = False) -> None:
        try:
            async with self._granted_slots if granted else self._slots:
                deferred = await check(name)
            if deferred is not None:  # it waits its turn there, its place here given back
                self._turns.add(name, deferred.endpoint, check)
        finally:
            self._turns.done(name)  # (its fetch turn, if it had it, is used)
            if len(self._turns):  # (a place freed, or a turn passed: the next may take it)
                self._turn.set()
            self._pending.discard(name)
            self._granted.discard(name)
            # this task ends here (nothing awaited below): it gives up its place before the next takes it, so
            # the jobs held never pass the bound, not even for the tick before the done callback runs
            self._jobs.discard(asyncio.current_task())  # type: ignore[arg-type]
            self._next_waiting()

    async def _take_turns(self) -> None:
        """Names whose fetch turn came are checked again (each machine's ports in turn: ``FetchTurns``)."""
        while True:
            self._turn.clear()
            wait: float | None = None
            try:
                # (each name given its turn finds a slot of its own free)
                while len(self._pending) < MAX_PENDING + GRANTED_OVER and len(self._granted) < GRANTED_OVER:
                    got = self._turns.next()
                    if not isinstance(got, tuple):
                        wait = got
                        break
                    self._queue(*got, granted=True)
            except Exception:  # noqa: BLE001 - the turns are looked at again at the next tick
                log.exception("A2A discovery: the card fetch turns could not be looked at")
            # (asyncio.timeout, not wait_for: wait_for, its event set as it was cancelled, swallowed the
            # cancel, and stop waited on this loop for ever)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(TURN_TICK if wait is None else min(wait, TURN_TICK)):
                    await self._turn.wait()

    def _next_waiting(self) -> None:
        """The oldest name still waiting (heard within ``LATER_FOR``) takes the place freed."""
        while self._later and len(self._pending) < MAX_PENDING:
            name, check, heard = self._later.pop_oldest()
            if self._clock() - heard <= LATER_FOR:
                self._queue(name, check)

    def _machine_of(self, name: str) -> str:
        """The machine ``name``'s cached records name (no query sent): what its place among the names
        waiting is counted by."""
        zeroconf = _zeroconf()
        try:
            info = zeroconf.asyncio.AsyncServiceInfo(SERVICE_TYPE, name)
            if info.load_from_cache(self.zc.zeroconf):
                addresses = info.parsed_addresses()
                if addresses:
                    return fetch_key(addresses[0])
        except Exception:  # noqa: BLE001 - a name zeroconf cannot read (control characters): none named
            pass
        return UNREAD

    def _may_fetch(self, name: str) -> Callable[[str], None]:
        """What ``verify_peer`` asks before it fetches ``name``'s card from a base URL: refused when that
        address is listed under enough names already, deferred when the budget says wait."""
        def check(base_url: str) -> None:
            if self.registry.names_at(base_url, name) >= MAX_NAMES_PER_ENDPOINT:
                raise PeerRejected(CROWDED)
            wait = self._fetches.wait(name, base_url)
            if wait == 0 and self._turns.waits_turn(name, base_url):  # others of that machine wait before it
                wait = self._fetches.first_wait
            if wait > 0:
                raise FetchDeferred(wait, base_url)
            self._fetches.took(name, base_url)
        return check

    async def _resolve(self, name: str) -> FetchDeferred | None:
        """Resolve and check ``name``; what deferred its fetch, if the budget did (it waits its turn).
        A listed name announced anew is anyone's word too (another address, a TXT that does not check out):
        the listed peer is checked again where it was first, and the announcement is looked at only when
        that peer no longer checks out there (it moved, or left)."""
        if name in self.registry.peers:
            still = await self._listed_still(name)
            if still is not False:
                return None if still is True else still
        zeroconf = _zeroconf()
        try:
            # (refuses a name with control characters: a rejection like any other, not a lost task's error)
            info = zeroconf.asyncio.AsyncServiceInfo(SERVICE_TYPE, name)
            if not await info.async_request(
                self.zc.zeroconf, self.resolve_timeout_ms, question_type=zeroconf.DNSQuestionType.QM
            ):
                self.registry.reject(name, "did not resolve")
                return None
            txt = {k: v or "" for k, v in info.decoded_properties.items()}
            addresses = info.parsed_addresses(zeroconf.IPVersion.V4Only) or info.parsed_addresses()
            addresses = self._said_here(info, addresses)
            peer = await verify_peer(
                name, addresses, info.port or 0, txt, self._http,
                allow_loopback_plaintext=self.allow_loopback_plaintext, networks=self.networks,
                keys=self.keys, listed=self.listed, before_fetch=self._may_fetch(name),
            )
        except FetchDeferred as e:  # (what it listed stands meanwhile: a send checks the card again anyway)
            return e
        except PeerRejected as e:
            self.registry.reject(name, e)
            log.info("A2A peer %r rejected: %s", name[:100], e)
            return None
        except Exception as e:  # noqa: BLE001 - a broken peer must not break discovery
            log.info("A2A peer %r rejected: %s: %s", name[:100], type(e).__name__, e)
            self.registry.reject(name, f"could not be checked ({type(e).__name__})")
            return None
        if self.registry.is_self(peer):
            self.registry.reject(name, ITSELF)
            return None
        self.registry.admit(peer)
        return None

    async def _listed_still(self, name: str) -> FetchDeferred | bool:
        """``name``'s listed peer's card fetched again where it was checked (its records may be gone or
        another's, the address it was checked at stands): True when it still checks out (listed, its card as
        it is now), False when it does not (no longer listed) or none is listed; what deferred the fetch, when
        the budget did (listed meanwhile)."""
        listed = self.registry.peers.get(name)
        if listed is None:
            return False
        where = urlsplit(listed.base_url)
        try:
            peer = await verify_peer(
                name, [where.hostname or ""], where.port or 0, listed.txt, self._http,
                allow_loopback_plaintext=self.allow_loopback_plaintext, networks=self.networks,
                keys=self.keys, listed=self.listed, before_fetch=self._may_fetch(name),
            )
        except FetchDeferred as e:
            return e
        except Exception as e:  # noqa: BLE001 - a rejection, a broken peer: it is gone either way
            if self.registry.peers.get(name) is listed:
                del self.registry.peers[name]
            log.info("A2A peer %r no longer checks out where it was checked (%s): not listed",
                     name[:100], type(e).__name__)
            return False
        if self.registry.peers.get(name) is listed and not self.registry.is_self(peer):
            self.registry.admit(peer)  # (the card as it is now)
        return True

    def _said_here(self, info: Any, addresses: list[str]) -> list[str]:
        """``addresses`` without the ones naming this machine (loopback, 0.0.0.0) that no announcement heard
        from loopback chose (``heard_on_loopback.py``: a LAN host may announce 127.0.0.1 too); PeerRejected
        when none is left."""
        from sentinel_mcp.a2a.heard_on_loopback import heard_on_loopback

        kept = [a for a in addresses
                if not names_this_host(a) or heard_on_loopback(self.zc.zeroconf, info, a)]
        if addresses and not kept:
            raise PeerRejected("names this machine (a loopback address) in an announcement not heard from "
                               "loopback: any host on the link can announce 127.0.0.1; its card is not "
                               "fetched")
        return kept

    async def stop(self) -> None:
        self._later.clear()
        if self._taker is not None:
            self._taker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._taker
            self._taker = None
        if self._browser is not None:
            await self._browser.async_cancel()
        for job in list(self._jobs):
            job.cancel()
        if self._jobs:
            await asyncio.wait(self._jobs)
        await self._http.aclose()


def open_zeroconf(interfaces: list[str]) -> AsyncZeroconf:
    """zeroconf on ``interfaces`` (IPv4), keeping which records loopback announced (``heard_on_loopback``)."""
    from sentinel_mcp.a2a.heard_on_loopback import open_heard

    return open_heard(interfaces)


async def discover_peers(
    interfaces: list[str],
    timeout: float,
    exclude: set[str] | None = None,
    tls: ClientTLS | None = None,
    allow_loopback_plaintext: bool = False,
    networks: tuple[IPNetwork, ...] = LOOPBACK,
    keys: CardKeys = NO_KEYS,
    listed: ListedPeers = NO_LISTED,
) -> PeerRegistry:
    """Browse for ``timeout`` seconds and return the verified (and rejected) peers."""
    registry = PeerRegistry()
    zc = open_zeroconf(interfaces)
    browser = PeerBrowser(zc, registry, exclude, tls=tls, allow_loopback_plaintext=allow_loopback_plaintext,
                          networks=networks, keys=keys, listed=listed)
    try:
        await browser.start()
        await asyncio.sleep(timeout)
        await browser.settle(5.0)  # let resolutions already under way finish
    finally:
        await browser.stop()
        await zc.async_close()
    return registry
