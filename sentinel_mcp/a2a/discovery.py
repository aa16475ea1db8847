"""mDNS / DNS-SD discovery of A2A agents: advertise ``_a2a._tcp.local.``, browse, verify.

TXT: ``path`` (card path), ``v`` (A2A protocol version), ``ver`` (agent version), ``proto`` (binding), ``tls``
(0/1). TXT contents are never trusted: a peer counts only after its card was fetched over TLS from a server
whose certificate checks out (chain to the system's store or ``peer_tls.ca``, the advertised address in its
names, ``peer_tls.pin_sha256`` when given), parsed as an A2A v1.0 AgentCard, and found to name the advertised
host and port in an interface URL of the same scheme. Answering on the local network proves nothing: a
plaintext peer is accepted on a loopback address only, and only when ``sentinel.a2a.allow_loopback_plaintext``
is on (an announcement's addresses are its sender's word: any host on the link can announce 127.0.0.1). The
TXT card path is a plain path (letters, digits, ``-._~/``): no query, fragment, escapes or dot segments, and
it names an agent card (its last segment ``agent-card.json``, or ``agent.json`` as before A2A 0.3; under any
prefix): an announcement never makes Sentinel GET another path of a local service (``/admin/shutdown``) or of
its own front. The card is fetched only from an announced address inside the allowed networks
(``peer_networks.py``: anyone can announce any address), and its signatures are checked against the pinned and
trusted keys (``card_signature.py``): a peer pinned to a key counts only with a card it signed. A peer's names
(its card's, its mDNS instance's) must read as themselves: one script (Common and Inherited characters go with
any; Latin with Han and kana or Hangul), no invisible, control or direction-changing character
(``core/look_alike_names.py``); a name that only reads as a pinned one is refused, and so is one that reads as
(or is) the name of a peer the config lists by URL elsewhere (``listed_peers.py``); between announced names,
one that reads as another makes that name find nobody (``PeerRegistry.find``).
"""

from __future__ import annotations

import functools
import hashlib
import ipaddress
import json
import logging
import re
import secrets
import socket
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable
from urllib.parse import urlsplit

import httpx2

from sentinel_mcp.a2a.announced_card_client import AnnouncedCardClient
from sentinel_mcp.a2a.endpoint_url import Endpoint, NotAnEndpoint, canonical_host, sent_url
from sentinel_mcp.a2a.card import CARD_PATH, SENTINEL_EXTENSION, SELF_MARK
from sentinel_mcp.a2a.card_fetch import NO_CARD, NoCard, PeerRejected, check_name, fetch_card
from sentinel_mcp.a2a.card_signature import (NO_KEYS, UNSIGNED, CardKeys, CardRefused, CardTrust, check_card,
                                             folded_name, signers)
from sentinel_mcp.a2a.listed_peers import NO_LISTED, ListedPeers
from sentinel_mcp.a2a.offer_contexts import OfferContexts
from sentinel_mcp.a2a.peer_networks import LOOPBACK, IPNetwork, allowed
from sentinel_mcp.a2a.protocol import PROTOCOL_VERSION, AgentCard
from sentinel_mcp.a2a.settings import A2ASettings
from sentinel_mcp.config import loopback_host
from sentinel_mcp.core.display_text import Marked, compose, error_text, safe_text
from sentinel_mcp.core.look_alike_names import looks_alike

log = logging.getLogger(__name__)
SERVICE_TYPE = "_a2a._tcp.local."
# a card path: a plain absolute path, no query, fragment, percent-escape, backslash or dot segment
_SEGMENT = re.compile(r"[A-Za-z0-9._~-]+")


if TYPE_CHECKING:
    from zeroconf.asyncio import AsyncZeroconf


def _zeroconf() -> Any:
    """zeroconf (with ifaddr's ctypes set-up) is imported by the first advertisement or browse, not when the
    a2a built-in starts: over stdio it never uses mDNS (0.1 to 0.2 s of cold start, issue 21)."""
    import zeroconf
    import zeroconf.asyncio

    return zeroconf


# frozen: a peer is its card as checked (one fetched again is a new Peer), so what it is an agent of is worked
# out once (``agent``, ``digest``): comparing peers by name serialized both cards per pair, per listing (64
# peers of one 200 KB card: 24,570 serializations for three listings)
@dataclass(frozen=True)
class Peer:
    instance: str  # the mDNS instance name
    base_url: str
    card_url: str
    card: AgentCard
    rpc_url: str  # the card's preferred JSON-RPC interface
    txt: dict[str, str]
    trust: CardTrust = UNSIGNED  # how far its card's signatures vouch for it
    verified_at: float = field(default_factory=time.time)

    @functools.cached_property
    def digest(self) -> str:
        """What a verdict on this peer is a verdict on: its card, where it answers and how it was vouched for
        (a card fetched again, changed, is another peer for every verdict given on the old one). Its
        signatures count by who signed them (``card_signature.signers``), not by their times or bytes: a card
        signed anew (dated signatures are, before they expire) is the card the verdict was on."""
        card = self.card.model_dump(mode="json", by_alias=True, exclude_none=True, exclude={"signatures"})
        said = json.dumps([self.instance, self.base_url, self.rpc_url, self.trust.verified, self.trust.key,
                           card, signers(self.card.signatures)],
                          sort_keys=True, ensure_ascii=True, default=str)
        return hashlib.sha256(said.encode()).hexdigest()

    @functools.cached_property
    def agent(self) -> str:
        """What makes announcements one agent: where it answers, its card (its signatures aside: an ECDSA
        signer signs anew each time) and how that was vouched for; the instance name is left out (anyone can
        announce a peer's address again under another)."""
        card = self.card.model_dump(mode="json", by_alias=True, exclude_none=True, exclude={"signatures"})
        said = json.dumps([self.rpc_url, self.trust.verified, self.trust.key, card], sort_keys=True,
                          ensure_ascii=True, default=str)
        return hashlib.sha256(said.encode()).hexdigest()

    def summary(self) -> dict[str, Any]:
        """The peer as shown to a person or a model: every text in it is the peer's own word (its mDNS
        announcement, its card), so each is cut to a bound and its invisible, control and direction-changing
        characters are made visible; a checked card proves who answers, not that what it says is safe."""
        return {"instance": shown_name(self.instance), "name": safe_text(self.card.name, 100),
                "description": safe_text(self.card.description, 1000),
                "base_url": safe_text(self.base_url, 300), "rpc_url": safe_text(self.rpc_url, 300),
                "version": safe_text(self.card.version, 50),
                "signed": self.trust.verified, "card_signature": self.trust.note,
                "skills": [safe_text(s.id, 100) for s in self.card.skills[:MAX_SHOWN_SKILLS]],
                "txt": {safe_text(k, 64): safe_text(v, 255)
                        for k, v in list(self.txt.items())[:MAX_SHOWN_TXT]}}


ITSELF = "this agent itself: the card at the announced address is its own"
MAX_SHOWN_SKILLS = 50
MAX_SHOWN_TXT = 16


def shown_name(instance: str) -> str:
    """An mDNS instance name as shown: anyone on the link picks it, unchecked (a name is never verified)."""
    return safe_text(instance, 300)


# Anyone on the link can announce names, thousands in one packet, each unchecked: what Sentinel does for them
# is bounded. Resolutions (an mDNS query, then a card fetch) run a few at a time, announcements waiting beyond
# MAX_PENDING are ignored until the queue drains, and only the newest MAX_REJECTED rejections are kept. One
# card announced under 10,000 names checks out 10,000 times: at most MAX_PEERS are listed (every listing
# compares each peer's name with every other's, and the model reads them all).
MAX_RESOLVING = 8
MAX_PENDING = 64
MAX_REJECTED = 100
MAX_PEERS = 64
# one endpoint (scheme, address, port) is listed under at most this many instance names: one card server
# cannot fill the list alone (and a name beyond it is refused before its card is fetched)
MAX_NAMES_PER_ENDPOINT = 4
FULL = (f"not listed: the list of peers is full ({MAX_PEERS}); a card signed by a configured key still "
        "gets in, in place of the oldest unsigned peer")
CROWDED = (f"not listed: {MAX_NAMES_PER_ENDPOINT} other names already list the agent at this address (one "
           "address is listed under that many names at most)")


class PeerRegistry:
    """Verified peers (and why others were rejected), shared by the browser, the service status and tools."""

    def __init__(self) -> None:
        self.peers: dict[str, Peer] = {}
        self.rejected: dict[str, str] = {}  # the newest MAX_REJECTED, oldest first
        # why no card came (``card_fetch.NoCard``): for the owner's log and terminal, never the model's view
        self.no_card: dict[str, str] = {}
        self.ignored = 0  # announcements not looked at: too many were waiting
        # the instance names this agent announces itself under: its configured name may be another's already
        # (zeroconf then renames it, "name (2)"), so it is known by the name it holds, never taken as a peer
        self.own: set[str] = set()
        # in this agent's own card (``card.SELF_MARK``), known to this process only: a card that carries it
        # is this agent's, however it was announced (any name, any address: loopback reaches it from inside)
        self.mark = secrets.token_hex(16)
        # what a session's sending guard was last told of the peer a name finds: its card's digest
        # (peer_trust.py), by (session, name)
        self.checked: dict[tuple[str, str], str] = {}
        # the offers to the orchestrator in flight, by context (shared like the peers: the a2a built-in makes
        # them, the A2A service reads whose an orchestrator's sub-task is: on_behalf.py)
        self.offers = OfferContexts()

    def reject(self, name: str, why: str | PeerRejected) -> None:
        """``why``: a refusal's text, or the refusal (a reason it marked stays marked: ``Marked``); a card
        that could not be fetched is kept as ``NO_CARD``, which way it failed left out
        (``card_fetch.NoCard``)."""
        self.no_card.pop(name, None)
        if isinstance(why, NoCard):
            self.no_card[name] = error_text(why, 300)
            why = NO_CARD
        if isinstance(why, PeerRejected):
            why = error_text(why, 300)
        self.peers.pop(name, None)
        self.rejected.pop(name, None)  # (re-inserted: the newest last)
        self.rejected[name] = why
        while len(self.rejected) > MAX_REJECTED:
            del self.rejected[next(iter(self.rejected))]
        while len(self.no_card) > MAX_REJECTED:  # (its own bound: a name taken later leaves its entry)
            del self.no_card[next(iter(self.no_card))]

    def admit(self, peer: Peer) -> bool:
        """List ``peer`` (under its instance name, in place of what that name listed) unless the list is full
        (``MAX_PEERS``): then a peer whose card a configured key signed takes the place of the oldest unsigned
        one (an announcer cannot sign), and any other is rejected as ``FULL``. False when not listed."""
        name = peer.instance
        if self.names_at(peer.base_url, name) >= MAX_NAMES_PER_ENDPOINT:
            self.reject(name, CROWDED)
            return False
        if name not in self.peers and len(self.peers) >= MAX_PEERS:
            unsigned = next((n for n, p in self.peers.items() if not p.trust.verified), None)
            if not peer.trust.verified or unsigned is None:
                self.reject(name, FULL)
                return False
            del self.peers[unsigned]
        self.rejected.pop(name, None)
        self.peers[name] = peer
        return True

    def names_at(self, base_url: str, besides: str) -> int:
        """How many names other than ``besides`` list a peer at ``base_url``."""
        return sum(1 for n, p in self.peers.items() if p.base_url == base_url and n != besides)

    def merge(self, found: PeerRegistry) -> None:
        """``found``'s peers (a browse's) admitted here; one refused for room is rejected in ``found`` too
        (what that browse is answered with)."""
        for name, peer in list(found.peers.items()):
            if not self.admit(peer):
                found.reject(name, self.rejected.get(name, FULL))

    def is_self(self, peer: Peer) -> bool:
        """Whether ``peer``'s card is this agent's own (it carries this registry's mark)."""
        for ext in peer.card.capabilities.extensions or []:
            if ext.uri == SENTINEL_EXTENSION and (ext.params or {}).get(SELF_MARK) == self.mark:
                return True
        return False

    def verified(self) -> list[Peer]:
        return list(self.peers.values())

    def summaries(self) -> list[dict[str, Any]]:
        """Each listed peer as shown (``Peer.summary``), with ``reads_like``: the instances of the other
        listed peers whose card's name reads as its (the same name, or a look-alike): neither is found by it.
        """
        return [{**p.summary(), "reads_like": [shown_name(i) for i in self.ambiguous(p.card.name)
                                                if i != p.instance]}
                for p in self.peers.values()]

    def find(self, name_or_url: str) -> Peer | None:
        """The peer an mDNS instance or URL names (each names one), or the one peer whose card carries this
        name. A name two listed peers' cards carry is nobody's: a card names itself, so a second agent
        announcing the same name must not receive what was meant for the first (``ambiguous`` says who).
        Names are compared folded (case, compatibility forms, as pins are: ``card_signature.folded_name``):
        an unsigned "ＡＬＩＣＥ" beside a signed "alice" makes "alice" ambiguous, not the spoofer's. A name
        that only reads alike ("ВООК" in Cyrillic capitals for "book": ``look_alike_names``) is another
        name: it finds nobody by the name it imitates, and beside the real one it makes that name ambiguous
        too."""
        for p in self.peers.values():
            if name_or_url in (p.instance, p.base_url, p.rpc_url):
                return p
        named = self._named(name_or_url)
        wanted = folded_name(name_or_url)
        return named[0] if len(named) == 1 and folded_name(named[0].card.name) == wanted else None

    def _named(self, name: str) -> list[Peer]:
        """The listed peers whose card carries ``name`` or a name that reads as it, one per agent
        (``Peer.agent``): anyone can announce a peer's own address again under other instance names, and the
        card fetched there is that peer's own (signed, if it is), so those are one agent, not a second one
        making the name find nobody. The one announced under its card's own name stands for it, else the first
        by instance name (so a re-announcement cannot put its own instance name before the person asked to
        send). Another card at the same address is another claim: the name is ambiguous."""
        wanted = folded_name(name)
        found: list[Peer] = []
        own_first = sorted(self.peers.values(), key=lambda p: (
            folded_name(instance_label(p.instance)) != folded_name(p.card.name), p.instance))
        for p in own_first:
            if folded_name(p.card.name) == wanted or looks_alike(p.card.name, name):
                if not any(q.rpc_url == p.rpc_url and q.agent == p.agent for q in found):
                    found.append(p)
        return found

    def look_alikes(self, name: str) -> list[str]:
        """The instances of the listed peers whose card's name reads as ``name`` but is not it."""
        wanted = folded_name(name)
        return sorted(p.instance for p in self._named(name) if folded_name(p.card.name) != wanted)

    def rejections(self, owner: bool = False) -> dict[str, str]:
        """Why announced agents were not taken, as shown: the names are whatever their senders announced.
        ``owner``: for the person at the terminal (``a2a discover``), with why no card came (a model is told
        only that none did: ``card_fetch.NoCard``)."""
        return {shown_name(name): safe_text(self.no_card.get(name, why) if owner else why, 300)
                for name, why in list(self.rejected.items())[:100]}

    def ambiguous(self, name: str) -> list[str]:
        """The instances of the verified peers whose cards carry ``name`` or a look-alike of it, when more
        than one does."""
        named = sorted(p.instance for p in self._named(name))
        return named if len(named) > 1 else []


def txt_record(settings: A2ASettings) -> dict[str, str]:
    return {"path": CARD_PATH, "v": PROTOCOL_VERSION, "ver": settings.version, "proto": "jsonrpc",
            "tls": "1" if settings.tls else "0"}


def _ipv4(host: str | None) -> str | None:
    try:
        return str(ipaddress.IPv4Address(host)) if host else None
    except ValueError:
        return None


def _same_host(named: str | None, host: str) -> bool:
    """Whether a URL's host is this address, compared as ``endpoint_url`` compares hosts (an IPv6 address in
    any spelling: ``::1`` is ``0:0::1``; a shorthand such as ``127.1`` is no host; nothing resolved)."""
    try:
        return bool(named) and canonical_host(named or "") == canonical_host(host)
    except NotAnEndpoint:
        return False


def instance_name(name: str) -> str:
    label = name.replace(".", "-")[:63]
    return f"{label}.{SERVICE_TYPE}"


def plain_path(path: str) -> bool:
    """An absolute path of segments of letters, digits and ``-._~`` (none empty, none ``.`` or ``..``), at
    most 200 characters; the last segment may be empty (a trailing slash)."""
    if len(path) > 200 or not path.startswith("/"):
        return False
    segments = path[1:].split("/")
    if segments[-1] == "":
        segments.pop()
    return all(_SEGMENT.fullmatch(seg) and seg not in (".", "..") for seg in segments)


CARD_FILES = ("agent-card.json", "agent.json")  # the well-known card's name (A2A 0.3 on; before)


def card_path(path: str) -> bool:
    """A plain path (``plain_path``) to an agent card: its last segment is one of ``CARD_FILES``."""
    return plain_path(path) and path.rsplit("/", 1)[-1] in CARD_FILES


def instance_label(instance: str) -> str:
    """An mDNS instance name without its service type: the name a peer is pinned by."""
    return instance.removesuffix("." + SERVICE_TYPE)


async def verify_peer(instance: str, addresses: list[str], port: int, txt: dict[str, str],
                      http: httpx2.AsyncClient | AnnouncedCardClient, *,
                      allow_loopback_plaintext: bool = False,
                      networks: tuple[IPNetwork, ...] = LOOPBACK, keys: CardKeys = NO_KEYS,
                      listed: ListedPeers = NO_LISTED,
                      before_fetch: Callable[[str], None] | None = None) -> Peer:
    """Fetch and check the card of an advertised peer; PeerRejected says why it is not trusted.

    ``allow_loopback_plaintext``: accept a plaintext peer on loopback (as ``sentinel.a2a`` says).
    ``networks``: the only addresses a card is fetched from (``peer_networks.py``); ``keys``: what its
    signatures are checked against (``card_signature.py``); ``listed``: the peers the config lists by name and
    URL, whose names no one else's announcement may take (``listed_peers.py``); ``before_fetch``: told the
    base URL the card would come from, it may refuse (``PeerRejected``) or defer (``FetchDeferred``) the
    fetch.
    """
    if not addresses or not port or not 0 < port < 65536:
        raise PeerRejected("no address or port advertised")
    check_name("its mDNS instance name", instance_label(instance))
    inside = [a for a in addresses if allowed(a, networks)]
    if not inside:
        shown = Marked(", ".join(safe_text(a, 50) for a in addresses[:4]))
        raise PeerRejected(Marked(f"advertises only addresses outside the allowed networks ({shown}): its "
                                  "card is not fetched (sentinel.a2a.peer_networks)"))
    addresses = inside
    path = txt.get("path") or CARD_PATH
    if not card_path(path):
        raise PeerRejected(f"bad card path in TXT (a plain path to an agent card only): {path[:60]!r}")
    scheme = "https" if txt.get("tls") == "1" else "http"
    if scheme == "http" and not all(loopback_host(a) for a in addresses):
        raise PeerRejected(
            f"advertises plaintext (tls=0) at {addresses[0]}: beyond loopback a peer counts only if "
            "its certificate checks out"
        )
    if scheme == "http" and not allow_loopback_plaintext:
        raise PeerRejected(
            f"advertises plaintext (tls=0) at {addresses[0]}: a plaintext peer on loopback counts only with "
            "sentinel.a2a.allow_loopback_plaintext on (anyone on the link can announce a loopback address)"
        )
    host = ipaddress.ip_address(addresses[0]).compressed  # (the URL names the address as parsed)
    netloc = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    base_url = f"{scheme}://{netloc}"
    card_url = base_url + path
    if before_fetch is not None:
        before_fetch(base_url)
    raw, card = await fetch_card(http, card_url)
    try:
        trust = check_card(raw, [card.name, instance_label(instance)], keys)
    except CardRefused as e:
        raise PeerRejected(compose("card signature: ", error_text(e, 280))) from None
    same_scheme = {"https": ("https", "wss"), "http": ("http", "ws")}[scheme]
    # the card counts for the address it came from (the one whose certificate was checked), not for every
    # address the announcement lists: another would send later calls to a host nobody checked
    named = [
        i
        for i in card.supported_interfaces
        if _same_host(urlsplit(i.url).hostname, host)
        and urlsplit(i.url).port == port
        and urlsplit(i.url).scheme in same_scheme
    ]
    if not named:
        raise PeerRejected(
            f"card names none of the advertised endpoints ({host}:{port}, where it was fetched)"
        )
    rpc = next((i for i in named if i.protocol_binding == "JSONRPC"), None)
    if rpc is None:
        raise PeerRejected("card lists no JSONRPC interface at the advertised address")
    if rpc.protocol_version.split(".")[0] != PROTOCOL_VERSION.split(".")[0]:
        raise PeerRejected(compose("peer speaks A2A ", safe_text(rpc.protocol_version, 20),
                                   f", not {PROTOCOL_VERSION}"))
    impostor = listed.refusal([card.name, instance_label(instance)], rpc.url)
    if impostor is not None:
        raise PeerRejected(impostor)
    # sent to at the address checked, not at the card's spelling of it (``sent_url``: 127.0.0.1. is a name)
    at = Endpoint(urlsplit(rpc.url).scheme.lower(), canonical_host(host), port, "/")
    return Peer(instance=instance, base_url=base_url, card_url=card_url, card=card,
                rpc_url=sent_url(rpc.url, at), txt=txt, trust=trust)


class Advertiser:
    """Publishes this agent as ``<name>._a2a._tcp.local.`` on the configured interfaces."""

    def __init__(self, settings: A2ASettings, base_url: str, zc: AsyncZeroconf) -> None:
        self.settings = settings
        self.zc = zc
        parts = urlsplit(base_url)
        host = _ipv4(parts.hostname)
        addresses = (
            [host] if host and host != "0.0.0.0" else [a for a in map(_ipv4, settings.interfaces) if a]
        )
        if not addresses:
            raise ValueError(f"cannot advertise {base_url}: no IPv4 address to announce")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        self.info = _zeroconf().asyncio.AsyncServiceInfo(
            SERVICE_TYPE,
            instance_name(settings.name),
            addresses=[socket.inet_aton(a) for a in addresses],
            port=port,
            properties=txt_record(settings),
            server=f"{settings.name.replace('.', '-')[:50]}.local.",
        )

    async def start(self) -> str:
        await self.zc.async_register_service(self.info, allow_name_change=True)
        return self.info.name

    async def stop(self) -> None:
        await self.zc.async_unregister_service(self.info)
