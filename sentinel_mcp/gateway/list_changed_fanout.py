"""Catalog changes told to the clients whose principal's view they changed (``principal_views``: a change of
an upstream a principal cannot use is not its to hear of): handshake-era sessions get
``notifications/*/list_changed`` (each while its connection lives, within the ``LISTENERS`` shares), 2026-era
listeners get the subscription bus's events. A session gone or not reading is told no more: the announcer is
an upstream's supervisor, and a client must not hold it up."""

from __future__ import annotations

import logging
from typing import Any, Callable

from mcp.server import ServerRequestContext
from mcp.server.subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    ToolsListChanged,
)
from mcp.types import NotificationParams

from sentinel_mcp.gateway.client_notices import tell_each, told
from sentinel_mcp.gateway.front_link import connection_of
from sentinel_mcp.core.port import FrontPort
from sentinel_mcp.gateway.principal_bus import PrincipalBus
from sentinel_mcp.gateway.principal_views import PrincipalViews
from sentinel_mcp.gateway.session_tables import Shares, connection_key, on_end
from sentinel_mcp.identity.principal import Principal

log = logging.getLogger(__name__)


class ListChangedFanOut:
    """Mixed into the front, which sets ``bus`` and ``principal``."""

    bus: PrincipalBus
    port: FrontPort
    principal: Callable[[ServerRequestContext], Principal]

    def _init_fanout(self) -> None:
        self.views = PrincipalViews(self.port)
        # handshake-era sessions told of catalog changes: connection key -> (principal, session)
        self._legacy_sessions: dict[int, tuple[str, Any]] = {}
        self.listeners = Shares("LISTENERS", "list_changed listeners", 1_000, 10_000)

    async def _on_initialized(self, ctx: ServerRequestContext, params: NotificationParams) -> None:
        connection = connection_of(ctx)
        if connection is None:  # pragma: no cover - a handshake always has its connection
            return
        key = connection_key(connection)
        if key in self._legacy_sessions:
            return
        principal = self.principal(ctx)
        who = principal.name
        refused = self.listeners.take(who)
        if refused is not None:  # past its share: this session is not told of changes (it can still list)
            log.warning("session of %s not told of catalog changes: %s", who, refused)
            return
        self.views.note(principal)
        self._legacy_sessions[key] = (who, ctx.session)
        on_end(connection, "list_changed", lambda: self._forget_listener(key))

    def _forget_listener(self, key: int) -> None:
        found = self._legacy_sessions.pop(key, None)
        if found is not None:
            self.listeners.give_back(found[0])

    async def announce_catalog_changed(self) -> None:
        """Every handshake-era session of a principal whose view changed is told, side by side, then that
        principal's 2026-era listeners."""
        sessions = list(self._legacy_sessions.items())
        moved = self.views.changed({who for _, (who, _) in sessions} | self.bus.principals())

        async def tell(listener: tuple[int, Any]) -> None:
            key, session = listener

            async def send() -> None:
                await session.send_tool_list_changed()
                await session.send_prompt_list_changed()
                await session.send_resource_list_changed()

            why = await told(send)
            if why is not None:
                log.info("list_changed not taken (%s): the session is told of changes no more", why)
                self._forget_listener(key)

        await tell_each([(k, s) for k, (who, s) in sessions if who in moved], tell)
        for event in (ToolsListChanged(), PromptsListChanged(), ResourcesListChanged()):
            await self.bus.publish_among(moved, event)
