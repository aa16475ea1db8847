"""Who is calling: a bearer token or an API key (``X-API-Key``) on both bindings when configured.

Mounted in the gateway's HTTP host, the caller's principal is already resolved (Sentinel's one resolver chain,
which knows these keys too) and sits in the ASGI scope; standalone, the keys are checked here. The identity
(the principal's or key's name, else ``peer:<address>`` for a standalone app without auth) goes to the gateway
as ``client=`` and owns the caller's tasks.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from typing import Any

from starlette.requests import HTTPConnection
from starlette.responses import JSONResponse

from sentinel_mcp.a2a.jsonrpc import INVALID_REQUEST
from sentinel_mcp.a2a.settings import A2ASettings
from sentinel_mcp.identity.credentials import HTTP_SPACE
from sentinel_mcp.identity.resolver import SCOPE_KEY
from sentinel_mcp.core.errors import A2AError

API_KEY_HEADER = "X-API-Key"
REALM = "sentinel-a2a"


class AuthError(A2AError):
    pass


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


def authenticate(headers: Mapping[str, str], peer_host: str | None, settings: A2ASettings) -> str:
    """The caller's identity; raises AuthError when auth is configured and nothing valid was presented."""
    if not settings.auth_required:
        return f"peer:{peer_host or 'unknown'}"
    auth = headers.get("authorization") or ""
    scheme, _, credential = auth.partition(" ")
    if scheme.lower() == "bearer" and credential:
        credential = credential.strip(HTTP_SPACE)  # SP and HTAB only (credentials.py)
        if settings.token and _same(credential, settings.token):
            return settings.token_identity
        raise AuthError("invalid bearer token")
    key = headers.get(API_KEY_HEADER.lower()) or headers.get(API_KEY_HEADER)
    if key:
        for name, expected in settings.api_keys.items():
            if _same(key, expected):
                return name
        raise AuthError("invalid API key")
    raise AuthError("authentication required: send 'Authorization: Bearer <token>' or 'X-API-Key: <key>'")


def caller_identity(conn: HTTPConnection, settings: A2ASettings) -> str:
    """The caller of a request or WebSocket; raises AuthError (standalone, auth configured, nothing valid)."""
    principal = conn.scope.get(SCOPE_KEY)
    if principal is not None:
        return str(principal.name)
    return authenticate(conn.headers, conn.client.host if conn.client else None, settings)


def www_authenticate(settings: A2ASettings, error: str | None = None) -> str:
    challenges = []
    if settings.token:
        extra = ', error="invalid_token"' if error and "invalid" in error else ""
        challenges.append(f'Bearer realm="{REALM}"{extra}')
    if settings.api_keys:
        challenges.append(f'ApiKey realm="{REALM}", header="{API_KEY_HEADER}"')
    return ", ".join(challenges)


def unauthorized(settings: A2ASettings, error: str) -> JSONResponse:
    # a JSON-RPC error (id null: the body of a caller not yet known is not read), as every refusal at /a2a
    frame = {"jsonrpc": "2.0", "id": None,
             "error": {"code": INVALID_REQUEST, "message": "unauthorized: " + error}}
    return JSONResponse(frame, status_code=401,
                        headers={"WWW-Authenticate": www_authenticate(settings, error)})


def security_declaration(settings: A2ASettings) -> tuple[dict[str, dict], list[dict]] | None:
    """The card's ``securitySchemes`` and ``securityRequirements`` (either scheme is enough)."""
    schemes: dict[str, dict] = {}
    requirements: list[dict] = []
    if settings.token:
        schemes["bearer"] = {"httpAuthSecurityScheme": {"scheme": "Bearer",
                                                        "description": "static bearer token"}}
        requirements.append({"schemes": {"bearer": {"list": []}}})
    if settings.api_keys:
        schemes["apiKey"] = {"apiKeySecurityScheme": {"location": "header", "name": API_KEY_HEADER}}
        requirements.append({"schemes": {"apiKey": {"list": []}}})
    if settings.client_certificates in ("optional", "required"):
        # mutual TLS: a client certificate of the front's CA names a principal; "required": nothing else will
        # do
        schemes["mtls"] = {
            "mtlsSecurityScheme": {"description": "a client certificate issued by this agent's CA"}
        }
        mtls: dict[str, Any] = {"schemes": {"mtls": {"list": []}}}
        requirements = [mtls] if settings.client_certificates == "required" else [*requirements, mtls]
    return (schemes, requirements) if schemes else None
