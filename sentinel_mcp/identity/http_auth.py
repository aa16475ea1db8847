"""The HTTP/A2A authentication a config asks for: the owner's token (configured, or generated on first start),
the configured principals, and the A2A section's bearer token and API keys, in one resolver chain."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from sentinel_mcp.config import PRINCIPAL_NAME, RESERVED_PRINCIPALS, Config, ConfigError
from sentinel_mcp.identity import owner_token
from sentinel_mcp.identity.principal import OWNER_NAME, Principal
from sentinel_mcp.identity.resolver import Authenticator, PrincipalResolver, TokenResolver

OWNER_BY_TOKEN = Principal(OWNER_NAME, "token")


@dataclass
class HttpAuth:
    authenticator: Authenticator
    owner_token: str | None  # None with "auth": "none"
    token_file: Path | None  # where the generated token is kept (None: configured, or no auth)
    token_created: bool = False  # generated on this start: print it once

    @property
    def required(self) -> bool:
        return self.authenticator.required


def configured_principals(config: Config) -> dict[str, Principal]:
    """Every principal the config names (no secrets): the configured ones and the A2A section's keys."""
    out = {spec.name: Principal(spec.name, "token", tuple(spec.tools), tuple(spec.upstreams))
           for spec in config.sentinel.principals}
    for name in _a2a_keys(config, None):
        out.setdefault(name, Principal(name, "token"))
    return out


def _a2a_keys(config: Config, owner: str | None) -> dict[str, str]:
    a2a = config.sentinel.builtin_settings("a2a")
    peers = dict(a2a.get("api_keys") or {})
    if isinstance(a2a.get("token"), str) and a2a["token"] != owner:
        peers[str(a2a.get("token_identity") or "bearer")] = a2a["token"]
    for name, key in peers.items():
        if not re.match(PRINCIPAL_NAME, name) or name in RESERVED_PRINCIPALS:
            raise ConfigError(f"sentinel.a2a: {name!r} cannot name a principal (letters, digits, '_', '.', '-'; "
                              f"not {', '.join(RESERVED_PRINCIPALS)})")
        if not isinstance(key, str) or "${" in key or len(key) < 8:
            raise ConfigError(f"sentinel.a2a: the key of {name!r} must be a text of at least 8 characters")
    return peers


def http_auth_for(config: Config, extra: list[PrincipalResolver] | None = None) -> HttpAuth:
    """Build the chain; generates the owner's token file when the config needs one and has none."""
    http = config.sentinel.http
    tokens = TokenResolver()
    token, file, created = http.token, None, False
    if http.auth == "token" and token is None:
        file = owner_token.token_path(config.data_dir)
        try:
            token, created = owner_token.load_or_create(config.data_dir)
        except (OSError, ValueError) as e:
            raise ConfigError(f"the owner's token ({file}): {e}") from None
    if token is not None:
        tokens.add(OWNER_BY_TOKEN, token=token)
    known = configured_principals(config)
    for spec in config.sentinel.principals:
        tokens.add(known[spec.name], token=spec.token, sha256_hex=spec.token_sha256)
    for name, key in _a2a_keys(config, token).items():
        tokens.add(known.get(name) or Principal(name, "token"), token=key)
    resolvers: list[PrincipalResolver] = [*(extra or []), tokens]
    return HttpAuth(Authenticator(resolvers, required=http.auth == "token"), token, file, created)
