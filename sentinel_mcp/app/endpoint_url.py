"""The ``--url`` of ``call`` and ``chat``: a running Sentinel's MCP endpoint, checked before anything
connects, so a wrong one is one plain line (not an HTTP library's exception or a task group's)."""

from __future__ import annotations

from urllib.parse import urlsplit

from sentinel_mcp.core.errors import ConfigError


def checked_endpoint(url: str) -> str:
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
    if problem is not None:
        raise ConfigError(f"--url {url!r} is not a Sentinel MCP endpoint ({problem}; for example "
                          "http://127.0.0.1:8765/mcp)")
    return url
