"""How many connections the HTTP front holds open: in all, and from one holder (an address; IPv6, a /64).

Each connection holds a file descriptor from its first byte, before anything in it is authenticated: a local
(or, without auth, any) process opening connections and sending nothing held each for ``HEAD_SECONDS``, and
opening them faster than that filled the descriptor table. Past ``MAX_PER_PEER`` open from one holder (all of
127.0.0.1 is one), the holder's oldest connection that is between requests gives way to the newcomer (closed
at once, ``core/connection_share.py``); past ``MAX_CONNECTIONS`` in all, the holder with the most open gives
up its oldest such connection. Refusing the newcomer instead let one local process holding the address's share
with silent sockets keep every other local client out. A connection reading or answering a request (a stream,
a WebSocket) is never cut: only when none can give way is a new connection answered 503 with ``connection:
close`` and closed, nothing of it read, its descriptor back at once.

Counted when a connection is made and when it is lost (never per request), so a call costs nothing more. A
deployment with many clients behind one address raises them (``SENTINEL_CAP_HTTP_CONNECTIONS``,
``SENTINEL_CAP_HTTP_CONNECTIONS_PER_PEER``); under TLS a connection is counted once its handshake is done
(handshakes, and TLS connections, have their own bounds: ``tls/acceptor.py``).
"""

from __future__ import annotations

from typing import Any

from sentinel_mcp.core.safe_headers import SAFE_HEAD_LINES
from sentinel_mcp.core.connection_share import between_requests, holder as holder_of
from sentinel_mcp.core.deployment_caps import cap

MAX_CONNECTIONS = cap("HTTP_CONNECTIONS", 2048)  # as many as TLS keeps open (``tls/acceptor.MAX_OPEN``)
# from one address: half of all (every local client shares 127.0.0.1; a connection refused after its
# request was read still counts while it lingers, ``http_protocol.LINGER_SECONDS``)
MAX_PER_PEER = cap("HTTP_CONNECTIONS_PER_PEER", 1024)
BODY = b"sentinel: too many open connections; try again later\n"
REFUSAL = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
           b"connection: close\r\nretry-after: 1\r\n" + SAFE_HEAD_LINES
           + b"content-length: " + str(len(BODY)).encode() + b"\r\n\r\n" + BODY)
_KEY = "sentinel_open_connections"


class OpenConnections:
    """The open connections of one server, by holder, oldest first: each entry is the connection's protocol,
    which can be asked to ``give_way`` (close at once, its place already taken back here)."""

    __slots__ = ("total", "by_peer", "max_total", "max_per_peer", "given_way")

    def __init__(self, max_total: int | None = None, max_per_peer: int | None = None) -> None:
        self.total = 0
        self.by_peer: dict[str | None, list[Any]] = {}
        self.max_total = MAX_CONNECTIONS if max_total is None else max_total
        self.max_per_peer = MAX_PER_PEER if max_per_peer is None else max_per_peer
        self.given_way = 0  # connections closed to make room for a newer one

    def take(self, peer: str | None, connection: Any) -> bool:
        """A place for ``connection`` from ``peer``, made by closing an idle one if need be, or False."""
        who = holder_of(peer)
        mine = self.by_peer.get(who, [])
        if len(mine) >= self.max_per_peer:
            if not self._make_room(mine):
                return False
        elif self.total >= self.max_total:
            # a holder with more than one more than the newcomer's gives way (the biggest first), else the
            # newcomer's own: one address's flood never pushes another's connections out
            made = False
            for theirs in sorted(self.by_peer.values(), key=len, reverse=True):
                if len(theirs) <= len(mine) + 1:
                    break
                if self._make_room(theirs):
                    made = True
                    break
            if not made and not self._make_room(mine):
                return False
        self.by_peer.setdefault(who, mine).append(connection)
        self.total += 1
        return True

    def give_back(self, peer: str | None, connection: Any) -> None:
        """``connection`` ended: its place is free (nothing if it had given way already)."""
        who = holder_of(peer)
        mine = self.by_peer.get(who)
        if mine is None:
            return
        for i, held in enumerate(mine):
            if held is connection:
                del mine[i]
                self.total -= 1
                break
        if not mine:
            del self.by_peer[who]  # no holder stays counted once its connections are gone

    def hand_over(self, peer: str | None, old: Any, new: Any) -> None:
        """The connection goes on under another protocol (a WebSocket after its upgrade): same place."""
        for i, held in enumerate(self.by_peer.get(holder_of(peer), ())):
            if held is old:
                self.by_peer[holder_of(peer)][i] = new
                return

    def _make_room(self, held: list[Any]) -> bool:
        """Close the oldest of ``held`` that is between requests; False when each is busy."""
        for i, connection in enumerate(held):
            if between_requests(connection):
                del held[i]
                self.total -= 1
                self.given_way += 1
                connection.give_way()
                return True
        return False


def open_connections(server_state: Any) -> OpenConnections:
    """The count of the server whose state (uvicorn's, shared by all its connections) this is."""
    counted = getattr(server_state, _KEY, None)
    if counted is None:
        counted = OpenConnections()
        setattr(server_state, _KEY, counted)
    return counted
