"""Fetching a peer's agent card and reading it as an A2A v1.0 AgentCard: bounded in size and time, one JSON
object with each name once (what is signed is what is read), and its name one that reads as itself. Shared by
an announced peer's check (``discovery.verify_peer``) and a listed one's (``listed_peer_card.py``)."""

from __future__ import annotations

import ssl
from typing import Any

import httpx2
from pydantic import ValidationError

from sentinel_mcp.a2a.announced_card_client import AnnouncedCardClient
from sentinel_mcp.a2a.bounded_body import BodyRefused, exchange
from sentinel_mcp.a2a.card_canonical import parse_unique
from sentinel_mcp.a2a.protocol import AgentCard
from sentinel_mcp.core import wire_limits
from sentinel_mcp.core.display_text import compose, error_text, safe_text
from sentinel_mcp.core.errors import A2AError
from sentinel_mcp.core.look_alike_names import name_flaw

MAX_CARD_BYTES = 256 * 1024
CARD_DEADLINE = 10.0  # seconds for the whole card fetch (connect, headers, body)


class PeerRejected(A2AError):
    pass


class NoCard(PeerRejected):
    """No card came from the address: no connection, a TLS failure, a timeout, an HTTP status or a body that
    is no card. Its text says which (for the log and the owner's listed peers); an announced peer's rejection
    as kept and shown to the model says only ``NO_CARD``: the address and port were the announcer's choice,
    and "refused" against "answered HTTP 404" would tell it which ports of which hosts are open."""


NO_CARD = "no A2A card was fetched at the announced address (why is in Sentinel's log)"


def check_name(what: str, name: str) -> None:
    """A peer's name must read as itself (``look_alike_names.name_flaw``): one script, nothing hidden."""
    flaw = name_flaw(name)
    if flaw is not None:
        # marked here (a name's own brackets too), kept marked where the rejection is shown
        raise PeerRejected(compose(f"{what} '", safe_text(name, 100), f"' is refused: {flaw}"))


async def fetch_card(http: httpx2.AsyncClient | AnnouncedCardClient,
                     card_url: str) -> tuple[dict[str, Any], AgentCard]:
    """The card at ``card_url`` as sent (the object its signatures are over) and as read; PeerRejected says
    why there is none."""
    try:
        resp = await exchange(
            http, "GET", card_url, limit=MAX_CARD_BYTES, deadline=CARD_DEADLINE,
            headers={"Accept": "application/json"},
        )
    except BodyRefused as e:
        raise NoCard(compose("card fetch refused: ", error_text(e, 280))) from None
    except (httpx2.HTTPError, ssl.SSLError) as e:  # (a TLS 1.3 refusal arrives as an alert on the read)
        # e.g. the certificate check that failed
        detail = (" (", error_text(e, 260), ")") if card_url.startswith("https") and str(e) else ()
        raise NoCard(compose(f"card fetch failed: {type(e).__name__}", *detail)) from None
    if resp.status_code != 200:
        raise NoCard(f"card fetch answered HTTP {resp.status_code}")
    try:
        wire_limits.loads(resp.content)  # (its WireError is a ValueError) the bounds, before a second read
        raw = parse_unique(resp.content.decode("utf-8"))  # (one object, each name once: what is signed)
        card = AgentCard.model_validate(raw)
    except (ValueError, ValidationError) as e:
        raise NoCard(f"card is not an A2A AgentCard: {str(e).splitlines()[0][:200]}") from None
    check_name("its card's name", card.name)
    return raw, card
