"""Where a store lives: a SQLite path (the embedded default) or a ``postgresql://`` URL (shared by replicas).

``sentinel.store`` may name the server with ``${VAR}`` references (the password usually comes from the
environment, never from a file in the repository). The password is kept out of every text this module
makes: ``redacted`` is what logs, errors and ``/healthz`` show.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeGuard
from urllib.parse import unquote, urlsplit, urlunsplit
from sentinel_mcp.storage.database import StorageError

SCHEMES = ("postgresql://", "postgres://")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class LocationError(StorageError, ValueError):
    """The store setting cannot be used (names an unset variable, a malformed URL); never echoes a secret."""


def is_server_url(location: object) -> TypeGuard[str]:
    return isinstance(location, str) and location.strip().lower().startswith(SCHEMES)


def expand(text: str, env: Mapping[str, str] | None = None) -> str:
    """``${VAR}`` replaced from the environment; an unset variable is an error naming the variable only."""
    names: Mapping[str, str] = os.environ if env is None else env

    def one(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in names:
            raise LocationError(f"sentinel.store refers to ${{{name}}}, which is not set in the environment")
        return names[name]
    return _VAR.sub(one, text)


@dataclass(frozen=True)
class ServerLocation:
    """A PostgreSQL server database. ``dsn`` holds the secret; ``redacted`` is safe to show anywhere."""

    dsn: str
    redacted: str
    password: str | None

    def __repr__(self) -> str:  # a dataclass repr would print the DSN with its password
        return f"ServerLocation({self.redacted!r})"

    __str__ = __repr__

    def scrub(self, text: str) -> str:
        """``text`` (a driver's error, say) with the password and the full DSN removed."""
        text = text.replace(self.dsn, self.redacted)
        if self.password:
            text = text.replace(self.password, "***")
        return text


def server_location(setting: str, env: dict[str, str] | None = None) -> ServerLocation:
    raw = expand(setting.strip(), env)
    try:
        parts = urlsplit(raw)
        host, port = parts.hostname, parts.port  # port raises ValueError when not a number
    except ValueError:
        raise LocationError("sentinel.store: not a valid postgresql:// URL (check host and port)") from None
    if parts.scheme.lower() not in ("postgresql", "postgres"):
        raise LocationError("sentinel.store: a server store must be a postgresql:// URL")
    if not parts.path.strip("/") and "dbname=" not in parts.query:
        raise LocationError("sentinel.store: the postgresql:// URL names no database (…/<database>)")
    password = unquote(parts.password) if parts.password is not None else None
    netloc = parts.netloc
    if parts.password is not None:
        userinfo, _, hostpart = netloc.rpartition("@")
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}:***@{hostpart}"
    redacted = urlunsplit((parts.scheme, netloc, parts.path, "", ""))  # the query may carry secrets too
    del host, port
    return ServerLocation(dsn=raw, redacted=redacted, password=password)
