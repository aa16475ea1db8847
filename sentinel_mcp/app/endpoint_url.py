"""The ``--url`` of ``call`` and ``chat``: a running Sentinel's MCP endpoint, checked before anything
connects, so a wrong one is one plain line (not an HTTP library's exception or a task group's).

Plaintext stays on loopback, as the front's and the upstreams' does: an ``http://`` URL to any other host
would carry the bearer token (the owner's, read from the data dir by itself) in the clear, so it is refused
unless the caller says ``--plaintext``."""

from __future__ import annotations

from urllib.parse import urlsplit

from sentinel_mcp.config import loopback_host
from sentinel_mcp.core.errors import ConfigError


def checked_endpoint(url: str, plaintext: bool = False) -> str:
    """``url`` when it names an MCP endpoint Sentinel may send a token to (``plaintext``: an ``http://`` one
    beyond loopback too), else ConfigError saying why."""
    problem = None
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - reading it checks it (out of range, not a number)
    except ValueError as e:
        problem = str(e)
    else:
        if parts.scheme not in ("http", "https"):
            problem = "it must start with http:// or https://"
        elif not parts.hostname:
            problem = "it names no host"
        elif parts.scheme == "http" and not plaintext and not loopback_host(parts.hostname):
            raise ConfigError(f"--url {url!r} is plaintext beyond loopback: the token would travel in "
                              "the clear. Use https:// (the front serves TLS beyond loopback), or say "
                              "--plaintext to accept that")
    if problem is not None:
        raise ConfigError(f"--url {url!r} is not a Sentinel MCP endpoint ({problem}; for example "
                          "http://127.0.0.1:8765/mcp)")
    return url
