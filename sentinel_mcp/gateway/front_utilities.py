"""The front's utility requests, relayed to the upstream that owns what they name.

- ``logging/setLevel``: remembered per downstream connection (relayed log lines below it are dropped); once
  any client sets a level, handshake upstreams are asked for every line (``RELAYED_LEVEL``), never for the
  level of one client: an upstream is shared, and one client's level set there narrowed what every other
  connection and 2026-era request got (alice at "emergency" left bob no line at all).
- ``completion/complete``: routed by the prompt's exposed name or the resource template to its upstream (at
  most 100 values come back, as the spec allows: ``catalog_view``); one of an upstream still in its first
  connection waits for it, as prompts/get does (first_connections.py).
- ``resources/subscribe`` / ``unsubscribe``: subscribed upstream once per URI, reference-counted over clients;
  ``notifications/resources/updated`` from the upstream that owns the URI (no other) goes to each subscribed
  client (2026-era clients through their ``subscriptions/listen`` stream, whose resource filter subscribes
  upstream the same way). On an upstream kept per principal (``isolation: "per_principal"``) the resource is
  that principal's session's: subscribed there, once per URI and principal, and its updates go to that
  principal's subscribers and listen streams only (``principal_bus``).
- ``notifications/elicitation/complete``: to the client that got the URL elicitation.
- ``notifications/roots/list_changed`` from a client: to each upstream connection given its principal's roots
  since it was last told (``PushRelays.roots_changed``: one notice per roots given, whatever the flood).

Each request reaches only upstreams the caller's principal may read (``Principal.may_read``: it may use the
server and reach every tool of it): a prompt, template or resource of another is as unknown to it as one that
does not exist (same error), and a listen stream never carries its updates.
"""

from __future__ import annotations

import itertools
import logging
from typing import Any, Callable

from mcp.server import ServerRequestContext
from mcp.server.subscriptions import ResourceUpdated
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    CompleteRequestParams,
    CompleteResult,
    EmptyResult,
    PromptReference,
    ResourceTemplateReference,
    SetLevelRequestParams,
    SubscribeRequestParams,
    SubscriptionsListenRequestParams,
    SubscriptionsListenResult,
    UnsubscribeRequestParams,
)

from sentinel_mcp.core.display_text import compose
from sentinel_mcp.core.echoed_text import echoed
from sentinel_mcp.core.port import FrontPort, NotInCatalog
from sentinel_mcp.gateway.client_notices import tell_each, told
from sentinel_mcp.gateway.front_link import ConnectionLevels, UrlElicitations, connection_of
from sentinel_mcp.gateway.listen_streams import ListenStreams
from sentinel_mcp.gateway.principal_bus import PrincipalBus
from sentinel_mcp.gateway.principal_sessions import on_own_session
from sentinel_mcp.gateway.session_tables import Shares, connection_key, on_end
from sentinel_mcp.gateway.upstream import Upstream, UpstreamUnavailable
from sentinel_mcp.identity.principal import OWNER, Principal

log = logging.getLogger(__name__)
_streams = itertools.count(1)

RESOURCE_NOT_FOUND = -32002
MAX_SUBSCRIPTIONS = 10_000  # (connection, URI) pairs held at once, all principals together
SUBSCRIPTIONS_PER_PRINCIPAL = 1_000
# what a shared upstream is asked for once a client sets a level: every line, each client's own level applied
# by Sentinel to its connection (2026-era requests: to each request, by the SDK)
RELAYED_LEVEL = "debug"
# what is subscribed upstream: (URI, the principal whose own session holds it; None: the upstream's only one)
Held = tuple[str, str | None]


def resource_not_found(uri: str) -> MCPError:
    shown = echoed(uri)
    return MCPError(code=RESOURCE_NOT_FOUND, message=f"Resource not found: {shown}", data={"uri": shown})


class FrontUtilities:
    def __init__(
        self,
        port: FrontPort,
        listen: ListenStreams,
        bus: PrincipalBus,
        principal_of: Callable[[ServerRequestContext], Principal] = lambda ctx: OWNER,
        listening: Callable[[Principal], None] = lambda who: None,
    ) -> None:
        """``listening``: told of each principal that opens a listen stream (whose catalog view changes it
        hears of: ``principal_views``)."""
        self.port = port
        self.principal_of = principal_of
        self._listening = listening
        self.levels = ConnectionLevels()
        self.urls = UrlElicitations()
        self._listen = listen
        self._bus = bus
        # held -> {connection key: session}; the key numbers the connection (or a listen stream) holding it,
        # and the entry goes when that connection ends (session_tables)
        self._subscribers: dict[Held, dict[int, Any]] = {}
        self._holders: dict[int, tuple[str, set[Held]]] = {}  # connection key -> (principal, what it holds)
        self.shares = Shares(
            "SUBSCRIPTIONS", "resource subscriptions", SUBSCRIPTIONS_PER_PRINCIPAL, MAX_SUBSCRIPTIONS
        )
        self.listen_shares = listen.shares
        port.on_upstream_notices(self.resource_updated, self.elicit_complete)

    # ------------------------------------------------------------------ logging
    async def set_level(self, ctx: ServerRequestContext, params: SetLevelRequestParams) -> EmptyResult:
        self.levels.set(ctx, params.level)  # this connection's floor (``front_link.CallerLink.log``)
        await self.port.set_log_level(RELAYED_LEVEL)  # each upstream's failure is logged, not raised
        return EmptyResult()

    # ------------------------------------------------------------------ roots
    async def roots_changed(self, ctx: ServerRequestContext, params: object) -> None:
        """``notifications/roots/list_changed``: told only to connections given this principal's roots."""
        self.port.roots_changed(self.principal_of(ctx).name)

    # ------------------------------------------------------------------ completion
    async def complete(self, ctx: ServerRequestContext, params: CompleteRequestParams) -> CompleteResult:
        ref = params.ref
        if not isinstance(
            ref, (PromptReference, ResourceTemplateReference)
        ):  # pragma: no cover - SDK-checked
            raise MCPError(code=INVALID_PARAMS, message="unknown completion reference")
        context = params.context.model_dump() if params.context is not None else None
        try:
            return await self.port.complete(
                ref, params.argument.model_dump(), context, self.principal_of(ctx)
            )
        except NotInCatalog:
            if isinstance(ref, PromptReference):
                raise MCPError(code=INVALID_PARAMS,
                               message=compose("unknown prompt: ", echoed(ref.name))) from None
            raise resource_not_found(ref.uri) from None
        except UpstreamUnavailable as e:
            raise MCPError(code=-32603, message=str(e)) from None

    # ------------------------------------------------------------------ resource subscriptions
    def _owner(self, uri: str, who: Principal | None = None) -> Upstream:
        try:
            up: Upstream = self.port.resource_upstream(uri, who)
        except NotInCatalog:
            raise resource_not_found(uri) from None
        return up

    def _usable(self, uri: str, who: Principal) -> bool:
        try:
            self.port.resource_upstream(uri, who)
        except NotInCatalog:
            return False
        return True

    def _owned_by(self, uri: str, upstream: str) -> bool:
        try:
            return bool(self.port.resource_upstream(uri).name == upstream)
        except NotInCatalog:
            return False

    async def _add(self, uri: str, key: int, session: Any, who: Principal) -> None:
        up = self._owner(uri, who)
        if not up.offers("resources", "subscribe"):
            raise MCPError(
                code=INVALID_PARAMS, message=f"upstream {up.name} does not offer subscriptions to {uri}"
            )
        held: Held = (uri, who.name if up.principals is not None else None)
        holders = self._subscribers.get(held)
        if holders is not None and key in holders:
            return  # already held: no second share
        refused = self.shares.refusal(who.name)
        if refused is not None:
            raise MCPError(code=INVALID_PARAMS, message=refused)
        if holders is None:
            try:  # on the principal's own session when it keeps one (opened for it if need be)
                await on_own_session(up, held[1], lambda own: own.subscribe(uri))
            except UpstreamUnavailable as e:
                raise MCPError(code=-32603, message=str(e)) from None
            holders = self._subscribers.setdefault(held, {})
        if key in holders:
            return  # a concurrent request of the same connection got there first
        refused = self.shares.take(who.name)
        if refused is not None:  # a concurrent request took the last share while this one subscribed
            if not holders:
                del self._subscribers[held]
                await self._unsubscribe_upstream(held)
            raise MCPError(code=INVALID_PARAMS, message=refused)
        holders[key] = session
        self._holders.setdefault(key, (who.name, set()))[1].add(held)

    async def _drop(self, held: Held, key: int) -> None:
        if self._forget(held, key):
            await self._unsubscribe_upstream(held)

    def _forget(self, held: Held, key: int) -> bool:
        """Drop ``key``'s hold on ``held`` (no await: a cleanup cut short leaves the tables right); True when
        nobody holds it any more (the upstream is to be unsubscribed)."""
        holders = self._subscribers.get(held)
        if holders is None or key not in holders:
            return False
        del holders[key]
        mine = self._holders.get(key)
        if mine is not None:
            mine[1].discard(held)
            if not mine[1]:
                del self._holders[key]
            self.shares.give_back(mine[0])
        if holders:
            return False
        del self._subscribers[held]
        return True

    async def _unsubscribe_upstream(self, held: Held) -> None:
        uri, principal = held
        try:
            up: Upstream | None = self._owner(uri)
            if principal is not None:  # that principal's own session, if still open (never one opened for it)
                sessions = up.principals if up is not None else None
                up = sessions.open().get(principal) if sessions is not None else None
            if up is not None:
                await up.subscribe(uri, on=False)
        except (MCPError, UpstreamUnavailable) as e:  # gone upstream already: nothing to undo
            log.debug("unsubscribe %.200r upstream: %.200s", uri, e)

    async def _drop_all(self, key: int) -> None:
        """A connection or listen stream ended: its subscriptions go (upstream too, for a URI nobody else
        holds)."""
        mine = self._holders.get(key)
        unheld = [held for held in list(mine[1] if mine else ()) if self._forget(held, key)]
        for held in unheld:  # after the tables are right: the connection's teardown may be cut short
            await self._unsubscribe_upstream(held)

    async def subscribe(self, ctx: ServerRequestContext, params: SubscribeRequestParams) -> EmptyResult:
        connection = connection_of(ctx)
        if connection is None:  # pragma: no cover - every handshake-era request has its connection
            raise MCPError(code=INVALID_PARAMS, message="subscriptions need a session")
        key = connection_key(connection)
        on_end(connection, "subscriptions", lambda: self._drop_all(key))
        await self._add(params.uri, key, ctx.session, self.principal_of(ctx))
        return EmptyResult()

    async def unsubscribe(self, ctx: ServerRequestContext, params: UnsubscribeRequestParams) -> EmptyResult:
        connection = connection_of(ctx)
        if connection is not None:
            key = connection_key(connection)
            mine = self._holders.get(key)
            for held in [held for held in (mine[1] if mine else ()) if held[0] == params.uri]:
                await self._drop(held, key)
        return EmptyResult()

    async def listen(
        self, ctx: ServerRequestContext, params: SubscriptionsListenRequestParams
    ) -> SubscriptionsListenResult:
        """A 2026-era client's stream: its resource filter subscribes upstream for as long as it listens."""
        who = self.principal_of(ctx)
        refused = self._listen.shares.refusal(who.name)
        if refused is not None:  # asked before anything is subscribed upstream for it
            raise MCPError(code=INTERNAL_ERROR, message=refused)
        key = -next(_streams)  # its own number for as long as it listens (negative: never a connection's)
        requested = list(params.notifications.resource_subscriptions or [])
        # the bus delivers every URI the stream names: keep only those of upstreams this caller may use (one
        # of
        # another principal's upstreams is dropped from the ack exactly like a URI that routes nowhere)
        usable = [uri for uri in requested if self._usable(uri, who)]
        if usable != requested:
            notifications = params.notifications.model_copy(update={"resource_subscriptions": usable or None})
            params = params.model_copy(update={"notifications": notifications})
        self._listening(who)
        try:
            for uri in usable[:100]:
                try:
                    await self._add(uri, key, None, who)  # delivered by the bus, not by this session
                except MCPError as e:
                    log.info("listen: not subscribed to %.200r: %.200s", uri, e.message)
            return await self._listen.serve(ctx, params, who.name)
        finally:
            await self._drop_all(key)

    async def resource_updated(self, upstream: str, uri: str, principal: str | None = None) -> None:
        """Relayed only when ``upstream`` owns ``uri`` (it routes there) and it was subscribed to: another
        upstream's notice for that URI would be a forged "changed" signal to its listeners. One that came on
        ``principal``'s own session of it is told to that principal's subscribers only."""
        held: Held = (uri, principal)
        if held not in self._subscribers or not self._owned_by(uri, upstream):
            log.info("upstream %s: resources/updated for %.200r dropped (not its subscribed resource)",
                     upstream, uri)
            return
        async def tell(subscriber: tuple[int, Any]) -> None:
            key, session = subscriber
            why = await told(lambda: session.send_resource_updated(uri))
            if why is not None:  # gone, or not reading: it holds up none of the next notices
                log.info("resources/updated for %.200r not taken (%s): subscription dropped", uri, why)
                await self._drop(held, key)

        subscribers = list(self._subscribers.get(held, {}).items())
        await tell_each([(key, session) for key, session in subscribers if session is not None], tell)
        if principal is None:  # the bus reaches every principal's listen streams naming the URI
            await self._bus.publish(ResourceUpdated(uri=uri))
        else:  # that principal's own streams only
            await self._bus.publish_to(principal, ResourceUpdated(uri=uri))

    # ------------------------------------------------------------------ URL elicitation
    async def elicit_complete(self, upstream: str, elicitation_id: str, principal: str | None = None) -> None:
        """``principal``: the notice came on that principal's own session of ``upstream``."""
        session = self.urls.pop(upstream, elicitation_id, principal)
        if session is None:
            return
        try:
            await session.send_elicit_complete(elicitation_id)
        except Exception:  # noqa: BLE001 - the client went away
            log.debug("could not relay elicitation completion %s", elicitation_id)
