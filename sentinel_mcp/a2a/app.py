"""How the gateway's HTTP server hosts the A2A participant (same host and port as ``/mcp``).

    peers = PeerRegistry()
    routes = create_a2a_routes(port, settings, peers)      # card, POST /a2a, WS /a2a/ws
    async with a2a_lifespan(settings, base_url, peers):     # mDNS advertise + browse when settings.advertise
        ...serve...
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from mcp.types import Tool
from starlette.routing import BaseRoute, Route, WebSocketRoute

from sentinel_mcp.a2a.assist_inbox import AssistInbox, inbox_location
from sentinel_mcp.a2a.card import CARD_PATH, RPC_PATH, WS_PATH, make_card_endpoint
from sentinel_mcp.a2a.discovery import Advertiser, PeerRegistry, instance_name
from sentinel_mcp.a2a.peer_browser import PeerBrowser, open_zeroconf
from sentinel_mcp.a2a.jsonrpc_http import make_endpoint
from sentinel_mcp.a2a.service import A2AService
from sentinel_mcp.a2a.shared_offers import share_offers
from sentinel_mcp.a2a.settings import A2ASettings
from sentinel_mcp.a2a.ws_binding import make_ws_endpoint
from sentinel_mcp.config import ConfigError
from sentinel_mcp.core.decision import Origin
from sentinel_mcp.core.host import HostState, RunningHost
from sentinel_mcp.core.port import GatewayPort, InvokeOutcome, Refused
from sentinel_mcp.core.tool_ref import ToolRef
from sentinel_mcp.identity.resolver import Authenticator
from sentinel_mcp.storage.open import release
from sentinel_mcp.tls.client_context import httpx_verify
from sentinel_mcp.tls.setup_error import TLSSetupError

log = logging.getLogger(__name__)

__all__ = ["A2ASettings", "PeerRegistry", "a2a_lifespan", "create_a2a_routes", "mount_a2a"]


def create_a2a_routes(port: GatewayPort, settings: A2ASettings, peers: PeerRegistry | None = None,
                      service: A2AService | None = None) -> list[BaseRoute]:
    """Starlette routes of the A2A participant; empty when ``settings.enabled`` is false."""
    if not settings.enabled:
        return []
    service = service or A2AService(port, settings, peers)
    return [
        Route(CARD_PATH, make_card_endpoint(service), methods=["GET"], name="a2a_agent_card"),
        Route(RPC_PATH, make_endpoint(service), methods=["POST"], name="a2a_jsonrpc"),
        WebSocketRoute(WS_PATH, make_ws_endpoint(service), name="a2a_ws"),
    ]


@contextlib.asynccontextmanager
async def a2a_lifespan(settings: A2ASettings, base_url: str,
                       peers: PeerRegistry | None = None) -> AsyncIterator[PeerRegistry]:
    """Advertise this agent over mDNS and keep ``peers`` filled with verified peers.

    Does nothing (but yield the registry) when A2A is disabled or ``advertise`` is false. mDNS that
    cannot start (no multicast) is logged and skipped: local capabilities keep working.
    """
    registry = peers if peers is not None else PeerRegistry()
    if not (settings.enabled and settings.advertise):
        yield registry
        return
    zc = open_zeroconf(settings.interfaces)
    advertiser = Advertiser(settings, base_url, zc)
    browser = PeerBrowser(
        zc, registry, exclude={instance_name(settings.name)}, tls=settings.peer_client_tls,
        allow_loopback_plaintext=settings.allow_loopback_plaintext, networks=settings.card_networks,
        keys=settings.card_keys, listed=settings.listed_peers,
    )
    registered = False
    try:
        try:
            own = await advertiser.start()
            registered = True
            browser.exclude.add(own)
            registry.own.add(own)  # (a2a_discover browses on its own: it excludes these too)
            await browser.start()
        except OSError as e:
            log.warning("A2A mDNS unavailable (%s); running without discovery", e)
        yield registry
    finally:
        await browser.stop()
        if registered:
            registry.own.discard(own)
            with contextlib.suppress(Exception):
                await advertiser.stop()
        await zc.async_close()


class LatePort:
    """The gateway as a port before it exists: the HTTP app is built before its lifespan starts the runtime.
    """

    def __init__(self, holder: HostState[RunningHost]) -> None:
        self.holder = holder

    def _gateway(self) -> GatewayPort | None:
        rt = self.holder.runtime
        return rt.gateway if rt is not None else None

    async def invoke(self, name: str, arguments: dict[str, Any] | None, **kw: Any) -> InvokeOutcome:
        gw = self._gateway()
        if gw is None:
            return Refused(reason="the gateway is starting; retry shortly")
        return await gw.invoke(name, arguments, **kw)

    def find_tool(self, name: str) -> Tool | None:
        gw = self._gateway()
        return gw.find_tool(name) if gw is not None else None

    def list_catalog_tools(self, principal: Any = None) -> list[Tool]:
        gw = self._gateway()
        return gw.list_catalog_tools(principal) if gw is not None else []

    def identity_of(self, name: str) -> ToolRef | None:
        gw = self._gateway()
        return gw.identity_of(name) if gw is not None else None

    def self_confirming(self, name: str) -> bool:
        gw = self._gateway()
        return gw.self_confirming(name) if gw is not None else False

    async def judged_arguments(self, name: str, arguments: Any) -> tuple[dict[str, Any], str | None]:
        gw = self._gateway()
        if gw is None:
            given = arguments if isinstance(arguments, dict) else {}
            return given, "the gateway is starting; retry shortly"
        return await gw.judged_arguments(name, arguments)

    def principal_for(self, principal: Any, session_id: str, origin: Origin) -> Any:
        gw = self._gateway()
        if gw is None:
            raise LookupError("the gateway is starting; no principal can be resolved yet")
        return gw.principal_for(principal, session_id, origin)

    async def refusal_for(
        self, principal: str, name: str, arguments: dict[str, Any], *, session_id: str
    ) -> str | None:
        gw = self._gateway()
        if gw is None:
            return "the gateway is starting; retry shortly"
        return await gw.refusal_for(principal, name, arguments, session_id=session_id)


def task_journal(config: Any, settings: A2ASettings, runtime: RunningHost) -> tuple[Path | None, list[Path]]:
    """Where this gateway keeps its A2A tasks, and the journals of ended gateways it takes over.

    By default each gateway instance has its own journal (``<data dir>/instances/<id>/a2a-tasks.db``: the
    journal is held exclusively, and several gateways may share a data dir); a new one takes over the tasks of
    instances that have ended and of the journal from before instances (``a2a/tasks.db``), so tasks survive a
    restart. A configured ``task_db`` is that one file (one gateway), "" keeps tasks in memory only."""
    from sentinel_mcp.storage.instances import dead_instance_files

    data_dir = Path(config.data_dir)
    if settings.task_db == "":
        return None, []
    if settings.task_db:
        return data_dir / settings.task_db, []
    legacy = data_dir / "a2a" / "tasks.db"
    instance = runtime.instance
    if instance is None:
        return legacy, []
    adopt = [legacy] if legacy.exists() else []
    adopt += dead_instance_files(instance.dir.parent.parent, JOURNAL_FILE)
    return instance.dir / JOURNAL_FILE, adopt


JOURNAL_FILE = "a2a-tasks.db"


def mount_a2a(
    app: Any,
    holder: HostState[RunningHost],
    config: Any,
    host: str,
    port: int,
    owner_token: str | None = None,
    front_tls: bool = False,
    client_certificates: str = "off",
    authenticator: Authenticator | None = None,
) -> None:
    """Add the A2A routes to the gateway's Starlette app, and its task journal and mDNS to the app's lifespan
    (``holder.lifespans``: entered once the gateway runs, left before it stops).

    Called by ``sentinel_mcp.app.serve``; ``holder.runtime`` is the running gateway once started.
    The gateway's HTTP host resolves every caller's principal on /a2a too; the card declares the bearer
    scheme when the owner's token (``owner_token``: configured or generated) is in force. ``front_tls``: the
    front serves TLS (sentinel.http.tls): the card, the mDNS record and the advertised URL say https/wss;
    ``client_certificates``: its mutual TLS mode, declared in the card. ``authenticator``: the HTTP host's,
    which proves a task's stored credentials again where it resumes (``resumed_credentials.py``).
    """
    settings = A2ASettings.from_section(config.sentinel.builtin_settings("a2a"))
    if not settings.enabled:
        return
    if front_tls:
        settings = settings.served_over_tls(client_certificates=client_certificates)
    try:
        httpx_verify(settings.peer_client_tls)  # a peer CA or client certificate that cannot load: say so now
    except TLSSetupError as e:
        raise ConfigError(f"sentinel.a2a.peer_tls: {e}") from None
    http_token = owner_token or config.sentinel.http.token
    if http_token and not settings.token and len(http_token) >= 8:
        settings = settings.model_copy(update={"token": http_token})
    peers = PeerRegistry()
    service = A2AService(LatePort(holder), settings, peers)
    service.authenticator = authenticator
    holder.a2a_service = service  # the server calls service.end_streams() when it starts to shut down
    app.router.routes.extend(create_a2a_routes(service.port, settings, peers, service=service))
    scheme = "https" if settings.tls else "http"
    base_url = settings.public_url or f"{scheme}://{host}:{port}"

    @contextlib.asynccontextmanager
    async def lifespan(rt: RunningHost) -> AsyncIterator[None]:
        if rt.services.a2a_peers is None:  # a2a_discover/a2a_send see the same peers
            rt.services.a2a_peers = peers
        shared_url = rt.services.store_url
        if shared_url and settings.task_db != "":  # replicas on one PostgreSQL: tasks there, leased
            await service.open(
                shared_url,
                replica=rt.services.replica or None,
                label_key=rt.services.label_key,  # contexts name the same conversations labels do
                task_key=rt.services.a2a_task_key,
                lease_seconds=settings.task_lease_seconds,
                renew_every=min(settings.task_lease_renew_seconds, settings.task_lease_seconds / 3),
            )
        else:
            await service.open(*task_journal(config, settings, rt))
        # other agents' help requests, for the person (replicas: in the shared store, any console answers)
        inbox = AssistInbox(inbox_location(config.data_dir, shared_url or None), key=rt.services.assist_key)
        service.inbox = inbox
        offers_db = None
        if shared_url:  # the orchestrator's sub-tasks may reach any replica: each knows every offer
            registries = {id(r.offers): r.offers for r in (peers, rt.services.a2a_peers)
                          if isinstance(r, PeerRegistry)}
            offers_db = await share_offers(shared_url, rt.services.a2a_offer_key,
                                           settings.orchestrator_timeout, list(registries.values()))
        try:
            if port == 0:
                log.warning("A2A: not advertising over mDNS, the HTTP port is not fixed (0)")
                yield
                return
            async with a2a_lifespan(settings, base_url, peers):
                yield
        finally:
            await service.close()
            await asyncio.to_thread(inbox.release)
            if offers_db is not None:
                await release(offers_db)

    holder.add_lifespan(lifespan)
