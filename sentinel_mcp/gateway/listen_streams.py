"""2026-era ``subscriptions/listen`` streams, bounded per principal.

The SDK's ``ListenHandler`` bounds its streams for all callers together (1,024): one principal holding that
many open (a principal limited to one tool, say) left every other one, the owner too, with "Subscription
limit reached". Here each principal holds at most its share and the total is ours (``session_tables``); the
SDK's own bound is set past it, so the refusal a caller meets is always its own share's or the total's.
Each stream listens as its principal (``principal_bus``).
"""

from __future__ import annotations

from mcp.server import ServerRequestContext
from mcp.server.subscriptions import ListenHandler
from mcp.shared.exceptions import MCPError
from mcp.types import INTERNAL_ERROR, SubscriptionsListenRequestParams, SubscriptionsListenResult

from sentinel_mcp.gateway.principal_bus import PrincipalBus, listening_as
from sentinel_mcp.gateway.session_tables import Shares

LISTEN_PER_PRINCIPAL = 100
MAX_LISTEN_STREAMS = 1_000  # all principals together


class ListenStreams:
    def __init__(self, bus: PrincipalBus) -> None:
        self.shares = Shares("LISTEN_STREAMS", "listen streams", LISTEN_PER_PRINCIPAL, MAX_LISTEN_STREAMS)
        self._handler = ListenHandler(bus, max_subscriptions=self.shares.total + 1)

    async def serve(
        self, ctx: ServerRequestContext, params: SubscriptionsListenRequestParams, who: str
    ) -> SubscriptionsListenResult:
        """One stream of ``who``'s, held against its share while it is open."""
        refused = self.shares.take(who)
        if refused is not None:
            raise MCPError(code=INTERNAL_ERROR, message=refused)
        try:
            with listening_as(who):  # the stream is who's: it hears what is told to who (``principal_bus``)
                return await self._handler(ctx, params)
        finally:
            self.shares.give_back(who)

    def close(self) -> None:
        self._handler.close()
