"""What the HTTP host serves beside MCP for the ecosystem around it.

- ``/metrics``: Prometheus text (calls, decisions, latencies, upstream health, the Prolog core's loads from
  source); behind the bearer token like MCP. The operator (the owner's credential) reads every principal's
  calls and the upstreams' figures; any other person reads the series of its own calls only
  (``Metrics.render(viewer=...)``): another principal's counts, errors and latencies, and the shared figures
  they move, are not its to read. Another agent (an A2A key) reads nothing.
- OAuth 2.1 protected-resource metadata (RFC 9728) when ``sentinel.oauth.issuer`` names the authorization
server
  that mints tokens for Sentinel: ``/.well-known/oauth-protected-resource`` (public, also under the resource's
  path), and every 401 names it in ``WWW-Authenticate`` (``resource_metadata=``), so a client such as the MCP
  Inspector can find where to get a token instead of stopping at ``auth_required``.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sentinel_mcp.app.runtime import Runtime
from sentinel_mcp.config import Config, ConfigError, loopback_host
from sentinel_mcp.core.host import HostState
from sentinel_mcp.gateway.session_tables import Shares
from sentinel_mcp.identity.resolver import SCOPE_KEY
from sentinel_mcp.policy import core_qlf

PRM_PATH = "/.well-known/oauth-protected-resource"


class OAuthSettings(BaseModel):
    """``sentinel.oauth``: the authorization server whose tokens this resource accepts."""

    model_config = ConfigDict(extra="forbid")
    issuer: str  # the authorization server's issuer URL
    resource: str | None = None  # the public URL of /mcp (default: from the listen address)
    scopes: list[str] = Field(default_factory=list)
    documentation: str | None = None

    @field_validator("issuer", "resource", "documentation")
    @classmethod
    def _https_url(cls, v: str | None) -> str | None:
        if v is not None and not _https_or_loopback(v):
            raise ValueError("must be an https:// URL (http:// only for localhost)")
        return v


def _https_or_loopback(url: str) -> bool:
    """https with a host, or http to this machine's loopback: the parsed host, never the text's first
    characters (``http://localhost.attacker.example`` and ``http://127.0.0.1@attacker.example`` begin like
    loopback). No user part: a name before ``@`` only misleads whoever reads the URL."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return False
    if not host or "@" in parts.netloc:
        return False
    return parts.scheme == "https" or (parts.scheme == "http" and loopback_host(host))


def oauth_settings(config: Config) -> OAuthSettings | None:
    section = config.sentinel.builtin_settings("oauth")
    if not section:
        return None
    try:
        return OAuthSettings.model_validate(section)
    except ValidationError as e:
        problems = "; ".join(f"sentinel.oauth.{'.'.join(map(str, x['loc']))}: {x['msg']}" for x in e.errors())
        raise ConfigError(f"invalid config {config.source}: {problems}") from None


def protected_resource_metadata(settings: OAuthSettings, base_url: str) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "resource": settings.resource or f"{base_url}/mcp",
        "authorization_servers": [settings.issuer],
        "bearer_methods_supported": ["header"],
    }
    if settings.scopes:
        doc["scopes_supported"] = settings.scopes
    if settings.documentation:
        doc["resource_documentation"] = settings.documentation
    return doc


class ProtectedResource:
    """ASGI wrapper: serves the metadata document (public) and names it in every 401's challenge."""

    def __init__(self, app: ASGIApp, settings: OAuthSettings, base_url: str) -> None:
        self.app = app
        self.document = json.dumps(protected_resource_metadata(settings, base_url)).encode()
        resource_path = _path_of(settings.resource or f"{base_url}/mcp")
        self.paths = {PRM_PATH, PRM_PATH + resource_path}  # RFC 9728 §3.1: also under the resource's path
        url = f"{base_url}{PRM_PATH}"
        scope_hint = f', scope="{" ".join(settings.scopes)}"' if settings.scopes else ""
        self.challenge = f'Bearer realm="sentinel", resource_metadata="{url}"{scope_hint}'.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if scope.get("path") in self.paths and scope.get("method") in ("GET", "HEAD"):
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(self.document)).encode()),
                        (b"cache-control", b"max-age=3600"),
                    ],
                }
            )
            await send(
                {"type": "http.response.body", "body": self.document if scope["method"] == "GET" else b""}
            )
            return

        async def send_with_challenge(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 401:
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"www-authenticate"]
                message = {**message, "headers": [*headers, (b"www-authenticate", self.challenge)]}
            await send(message)

        await self.app(scope, receive, send_with_challenge)


def _path_of(url: str) -> str:
    rest = url.split("://", 1)[-1]
    return "/" + rest.split("/", 1)[1] if "/" in rest else ""


def session_tables_text(tables: dict[str, Shares]) -> str:
    """Entries held in each per-session table (each gone when its session ends)."""
    lines = ["# TYPE sentinel_session_table_entries gauge"]
    for name, table in sorted(tables.items()):
        lines.append(f'sentinel_session_table_entries{{table="{name}"}} {table.held()}')
    return "\n".join(lines) + "\n"


def gateway_counts_text(rt: Runtime) -> str:
    """What the gateway refused or held on its own: calls past a principal's rate, tools whose definition has
    changed since pinned (no label per principal: A2A keys and certificates would make series unbounded)."""
    held = rt.catalog_health.held_count
    return (
        "# HELP sentinel_calls_over_rate_total Calls refused past their principal's calls a minute.\n"
        "# TYPE sentinel_calls_over_rate_total counter\n"
        f"sentinel_calls_over_rate_total {rt.gateway.rates.refused}\n"
        "# HELP sentinel_tools_held Upstream tools held since their definition changed (sentinel-mcp pins).\n"
        "# TYPE sentinel_tools_held gauge\n"
        f"sentinel_tools_held {held}\n"
    )


def core_fallbacks_text() -> str:
    """How often this process planned the Prolog core from source instead of its built ``.qlf``, by reason
    (policy/core_qlf.py): a series per reason, zero included, so a rate alert needs no series to appear."""
    lines = [
        "# HELP sentinel_core_qlf_fallbacks_total Prolog core loads from source, its built .qlf unused.",
        "# TYPE sentinel_core_qlf_fallbacks_total counter",
    ]
    for reason in core_qlf.REASONS:
        lines.append(f'sentinel_core_qlf_fallbacks_total{{reason="{reason}"}} {core_qlf.FALLBACKS[reason]}')
    return "\n".join(lines) + "\n"


def metrics_route(holder: HostState[Runtime]) -> Route:
    async def metrics(request: Request) -> Response:
        principal = request.scope.get(
            SCOPE_KEY
        )  # resolved by CallerGuard (absent only if mounted without it)
        if principal is None or principal.agent:
            return PlainTextResponse("forbidden: /metrics is for a person's principal (not another agent)\n",
                                     status_code=403)
        rt = holder.runtime
        if rt is None:
            return PlainTextResponse("starting\n", status_code=503)
        if principal.is_operator:
            body = (rt.metrics.render(rt.catalog_health) + session_tables_text(rt.front.tables)
                    + gateway_counts_text(rt) + core_fallbacks_text())
        else:  # its own calls' series; the rest counts every principal's
            body = rt.metrics.render(viewer=principal.name)
        return PlainTextResponse(body, media_type="text/plain; version=0.0.4")

    return Route("/metrics", metrics, methods=["GET"])
