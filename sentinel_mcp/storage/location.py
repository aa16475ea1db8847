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
from pathlib import Path
from typing import TypeGuard
from urllib.parse import quote, unquote, urlsplit, urlunsplit
from sentinel_mcp.storage.database import StorageError

SCHEMES = ("postgresql://", "postgres://")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class LocationError(StorageError, ValueError):
    """The store setting cannot be used (names an unset variable, a malformed URL); never echoes a secret."""


def is_server_url(location: object) -> TypeGuard[str]:
    return isinstance(location, str) and location.strip().lower().startswith(SCHEMES)


def expand(text: str, env: Mapping[str, str] | None = None, *, encoded: bool = False) -> str:
    """``${VAR}`` replaced from the environment; an unset variable is an error naming the variable only.
    ``encoded``: each value percent-encoded (a URL's user name or password: the value itself, whatever it
    holds)."""
    names: Mapping[str, str] = os.environ if env is None else env

    def one(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in names:
            raise LocationError(f"sentinel.store refers to ${{{name}}}, which is not set in the environment")
        return quote(names[name], safe="") if encoded else names[name]
    return _VAR.sub(one, text)


def userinfo_span(setting: str) -> tuple[int, int] | None:
    """Where a URL as written has its user name and password (the part of its netloc before the last '@'),
    or None. A variable there is put percent-encoded (``expand``'s ``encoded``; ``config_vars`` does the same
    for ``sentinel.store``): put as it is, a password holding '/', '@', '#' or '?' moved its tail into the
    host, port or path (its head then sent to whatever host that named), and a '%' was read as an escape.
    A variable holding the whole URL (``${DATABASE_URL}``) is put as it is."""
    start = setting.find("://")
    if start < 0:
        return None
    start += 3
    end = min((i for i in (setting.find(c, start) for c in "/?#") if i >= 0), default=len(setting))
    at = setting.rfind("@", start, end)
    return (start, at) if at >= 0 else None


def _expanded_url(setting: str, env: Mapping[str, str] | None) -> str:
    span = userinfo_span(setting)
    if span is None:
        return expand(setting, env)
    a, b = span
    return expand(setting[:a], env) + expand(setting[a:b], env, encoded=True) + expand(setting[b:], env)


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
        if self.password:  # as it is, and as the URL writes it (a driver may quote either)
            written = urlsplit(self.dsn).password or ""
            forms = {self.password, written, quote(self.password, safe="")}
            for form in sorted((f for f in forms if f), key=len, reverse=True):
                text = text.replace(form, "***")
        return text


def shown_location(location: str | Path) -> str:
    """A store's location as any text may show it: a server URL without its password (nor its query), or
    the file's path. An audit log's location held the setting as written, and the start-up line printed it
    with the password."""
    if not is_server_url(location):
        return str(location)
    try:
        return server_location(location).redacted
    except LocationError:
        return "the sentinel.store server (its URL cannot be read)"


def server_location(setting: str, env: dict[str, str] | None = None) -> ServerLocation:
    raw = _expanded_url(setting.strip(), env)
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
