"""How many connections the HTTP front holds open: in all, and from one peer address.

Each connection holds a file descriptor from its first byte, before anything in it is authenticated: a local
(or, without auth, any) process opening connections and sending nothing held each for ``HEAD_SECONDS``, and
opening them faster than that filled the descriptor table; the owner's next connection was then never
accepted. Past ``MAX_CONNECTIONS`` open in all, or ``MAX_PER_PEER`` from one address (all of 127.0.0.1 is
one address), a new connection is answered 503 with ``connection: close`` at once and closed, nothing of it
read: its descriptor is back as soon as it came. A connection already open is never cut for a newer one (an
owner's kept-alive or streaming connection keeps being served during a flood), and once the flood's
connections end, new ones are taken again.

Counted when a connection is made and when it is lost (never per request), so a call costs nothing more.
A deployment with many clients behind one address raises them (``SENTINEL_CAP_HTTP_CONNECTIONS``,
``SENTINEL_CAP_HTTP_CONNECTIONS_PER_PEER``); under TLS a connection is counted once its handshake is done
(handshakes, and TLS connections, have their own bounds: ``tls/acceptor.py``).
"""

from __future__ import annotations

from typing import Any

from sentinel_mcp.core.deployment_caps import cap

MAX_CONNECTIONS = cap("HTTP_CONNECTIONS", 2048)  # as many as TLS keeps open (``tls/acceptor.MAX_OPEN``)
# from one address: half of all (every local client shares 127.0.0.1; a connection refused after its
# request was read still counts while it lingers, ``http_protocol.LINGER_SECONDS``)
MAX_PER_PEER = cap("HTTP_CONNECTIONS_PER_PEER", 1024)
BODY = b"sentinel: too many open connections; try again later\n"
REFUSAL = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
           b"connection: close\r\nretry-after: 1\r\ncontent-length: " + str(len(BODY)).encode() + b"\r\n\r\n"
           + BODY)
_KEY = "sentinel_open_connections"


class OpenConnections:
    """The open connections of one server, by peer address."""

    __slots__ = ("total", "by_peer", "max_total", "max_per_peer")

    def __init__(self, max_total: int | None = None, max_per_peer: int | None = None) -> None:
        self.total = 0
        self.by_peer: dict[str, int] = {}
        self.max_total = MAX_CONNECTIONS if max_total is None else max_total
        self.max_per_peer = MAX_PER_PEER if max_per_peer is None else max_per_peer

    def take(self, peer: str) -> bool:
        """A place for one more connection from ``peer``, or False (nothing taken)."""
        held = self.by_peer.get(peer, 0)
        if self.total >= self.max_total or held >= self.max_per_peer:
            return False
        self.total += 1
        self.by_peer[peer] = held + 1
        return True

    def give_back(self, peer: str) -> None:
        self.total -= 1
        held = self.by_peer[peer] - 1
        if held:
            self.by_peer[peer] = held
        else:
            del self.by_peer[peer]  # no address stays counted once its connections are gone


def open_connections(server_state: Any) -> OpenConnections:
    """The count of the server whose state (uvicorn's, shared by all its connections) this is."""
    counted = getattr(server_state, _KEY, None)
    if counted is None:
        counted = OpenConnections()
        setattr(server_state, _KEY, counted)
    return counted
