"""Whose share of a front's connections one counts against, and whether it may give way to a newcomer.

Both HTTP fronts (plain, ``app/open_connections.py``, and TLS, ``tls/acceptor.py``) bound their open
connections per holder. Every local client shares 127.0.0.1, so a holder at its bound makes room by closing
its oldest connection that is between requests, never by refusing the newcomer: one local process holding the
address's share with silent sockets would otherwise keep every other local client out.
"""

from __future__ import annotations

import functools
import ipaddress
from typing import Any


def between_requests(protocol: Any) -> bool:
    """Whether a connection's HTTP protocol is between requests: none begun (Sentinel's front's ``_begun``,
    from a head's first byte), none queued (``pipeline``), and none being answered (uvicorn's ``cycle``, the
    last request read: None before the first, or its answer complete). Any other protocol (a WebSocket after
    its upgrade) is never taken for idle."""
    cycle = getattr(protocol, "cycle", True)
    if cycle is True or getattr(protocol, "_begun", False) or getattr(protocol, "pipeline", None):
        return False
    return cycle is None or getattr(cycle, "response_complete", False) is True


@functools.lru_cache(maxsize=1024)  # read once an address, not a connection (bounded: a peer may churn)
def holder(peer: str | None) -> str | None:
    """Whose share a connection counts against: its IPv4 address, or its IPv6 /64 (one host's usual
    allocation: an address of its own per connection would otherwise be a share per connection)."""
    try:
        address = ipaddress.ip_address(peer or "")
    except ValueError:
        return peer
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)
