"""A peer the owner lists by name and URL (``sentinel.a2a.bridge_targets``), reached by that name though it
never announces itself over mDNS.

The config is the owner's word for where the name answers, not for what answers there: the card at the listed
URL's origin is fetched and checked as an announced peer's is (``discovery.verify_peer``): plaintext only on
loopback with ``allow_loopback_plaintext``, TLS verified as ``peer_tls`` says, a name that reads as itself,
its signatures against the pinned and trusted keys (a peer pinned to a key counts only with a card it signed).
And it must be the listed peer's card: named as listed (folded: "BOOK" is "book"; a look-alike is another
name) and listing a JSON-RPC interface at the listed URL. What is sent goes to that interface; each send
fetches the card again, so a card changed since the guard's check is refused (``peer_trust.refusal``).
(``peer_networks`` bound where announcements may point; a listed URL is the owner's, so they do not apply.)
"""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx2

from sentinel_mcp.a2a.card import CARD_PATH
from sentinel_mcp.a2a.card_fetch import PeerRejected, fetch_card
from sentinel_mcp.a2a.card_signature import CardKeys, CardRefused, check_card, folded_name
from sentinel_mcp.a2a.discovery import Peer
from sentinel_mcp.a2a.endpoint_url import (NotAnEndpoint, endpoint, endpoint_difference, same_endpoint,
                                           sent_url)
from sentinel_mcp.a2a.protocol import PROTOCOL_VERSION
from sentinel_mcp.config import loopback_host
from sentinel_mcp.core.display_text import Marked, compose, error_text, safe_text


def _origin(url: str) -> str:
    """Scheme, host and port of the listed URL (``endpoint_url``: canonical, so what is fetched is what is
    compared): never its user name, password or query (a credential)."""
    try:
        listed = endpoint(url)
    except NotAnEndpoint as e:
        raise PeerRejected(compose("its listed URL names no endpoint: ", error_text(e))) from None
    if listed.scheme not in ("http", "https"):
        raise PeerRejected("its listed URL is not an http(s) URL with a host")
    default = {"http": 80, "https": 443}[listed.scheme]  # (left out as it mostly is written: peer_tokens)
    return f"{listed.scheme}://{listed.host}" + (f":{listed.port}" if listed.port != default else "")


async def verify_listed(name: str, url: str, http: httpx2.AsyncClient, *, keys: CardKeys,
                        allow_loopback_plaintext: bool = False) -> Peer:
    """The listed peer ``name`` (at ``url``, as listed) with its card checked; PeerRejected says why not."""
    base_url = _origin(url)
    if base_url.startswith("http:"):
        if not loopback_host(urlsplit(base_url).hostname or ""):
            raise PeerRejected("its listed URL is plaintext beyond loopback: a peer counts only if its "
                               "certificate checks out")
        if not allow_loopback_plaintext:
            raise PeerRejected("its listed URL is plaintext: a plaintext peer on loopback counts only with "
                               "sentinel.a2a.allow_loopback_plaintext on")
    card_url = base_url + CARD_PATH
    raw, card = await fetch_card(http, card_url)
    if folded_name(card.name) != folded_name(name):
        raise PeerRejected(Marked(f"the card at its listed URL is named {safe_text(card.name, 100)!r}, not "
                                  f"{safe_text(name, 100)!r}: another agent answers there"))
    try:
        trust = check_card(raw, [card.name, name], keys)
    except CardRefused as e:
        raise PeerRejected(compose("card signature: ", error_text(e, 280))) from None
    rpc = next((i for i in card.supported_interfaces
                if i.protocol_binding == "JSONRPC" and same_endpoint(i.url, url)), None)
    if rpc is None:
        offered = [i.url for i in card.supported_interfaces if i.protocol_binding == "JSONRPC"]
        why = endpoint_difference(offered[0], url) if offered else None
        raise PeerRejected(compose("its card lists no JSONRPC interface at its listed URL",
                                   *((": ", why) if why is not None else ())))
    if rpc.protocol_version.split(".")[0] != PROTOCOL_VERSION.split(".")[0]:
        raise PeerRejected(compose("peer speaks A2A ", safe_text(rpc.protocol_version, 20),
                                   f", not {PROTOCOL_VERSION}"))
    # sent to at the listed endpoint, not at the card's spelling of it (``sent_url``: ``localhost.``)
    return Peer(instance=name, base_url=base_url, card_url=card_url, card=card,
                rpc_url=sent_url(rpc.url, endpoint(url)), txt={}, trust=trust)
