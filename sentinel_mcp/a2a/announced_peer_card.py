"""An announced peer's card, checked again before anything is sent to it.

A peer found over mDNS was checked when it announced itself (``discovery.verify_peer``), and a send went on
that check for as long as the announcement stood: a pinned peer that then served, at the same address, a card
signed by another key (or none) was still the verified, pinned peer. So a send (``a2a_send``, ``a2a_relay``)
to a peer a configured key verified fetches its card again from where it was found and checks it as the
browser does (an unverified peer is a stranger already: the guard of sending asks the user about the card it
was shown, or the send is refused): a card its pin no longer
verifies is refused and said (the peer dropped from the list with the reason: a pin is the config's, never
taken over by a new key), and a changed card is the peer as it is now, for the verdict the send was decided on
(``peer_trust.refusal``: a verdict on the older card does not carry). An announced peer is trusted no further
than the config's keys vouch for the card it serves now.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx2

from sentinel_mcp.a2a.announced_card_client import AnnouncedCardClient
from sentinel_mcp.a2a.card_fetch import PeerRejected
from sentinel_mcp.a2a.discovery import ITSELF, Peer, PeerRegistry, verify_peer
from sentinel_mcp.a2a.settings import A2ASettings


async def rechecked(peer: Peer, registry: PeerRegistry, settings: A2ASettings,
                    http: httpx2.AsyncClient | AnnouncedCardClient) -> Peer:
    """``peer`` (announced, in ``registry``) with its card fetched and checked now, from the address and path
    it was found at; PeerRejected, the peer dropped from ``registry`` with the reason, when it no longer
    checks out."""
    at = urlsplit(peer.base_url)
    txt = {**peer.txt, "path": urlsplit(peer.card_url).path, "tls": "1" if at.scheme == "https" else "0"}
    try:
        now = await verify_peer(peer.instance, [at.hostname or ""], at.port or 0, txt, http,
                                allow_loopback_plaintext=settings.allow_loopback_plaintext,
                                networks=settings.card_networks, keys=settings.card_keys,
                                listed=settings.listed_peers)
        if registry.is_self(now):
            raise PeerRejected(ITSELF)
    except PeerRejected as e:
        registry.reject(peer.instance, e)
        raise
    if now.agent == peer.agent:  # the same card (an ECDSA signer signs it anew each time): the same peer
        return peer
    registry.peers[peer.instance] = now
    return now
