"""The request headers a config gives an HTTP upstream (``mcpServers.<name>.headers``), checked when it loads.
Mixed into the remote server's section (``config.RemoteServer``).

Why: a header is sent on every request, by one of two clients (the lean one, ``gateway/lean_http.py``, or the
MCP SDK's). A name that is no HTTP field name or a value with a line break or other control character was
refused by either at every connect (or split the request), a value outside ASCII failed the SDK's client
("UnicodeEncodeError"); two spellings of one field (names are case-insensitive) were both sent, the server
picking one; and a field Sentinel writes itself (the request's framing, its encoding, the MCP session) was
dropped by one client and sent over Sentinel's own by the other. Each is a config error naming the header,
never its value (often a secret).
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field, field_validator

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # RFC 9110's field name
_NOT_SENT = re.compile(r"[^\t\x20-\x7e]")  # a value: visible ASCII, spaces and tabs
# what Sentinel's clients write on every request: the framing, the negotiation, the MCP session
OWN_FIELDS = frozenset((
    "host", "content-length", "transfer-encoding", "connection", "keep-alive", "te", "trailer", "upgrade",
    "expect", "content-type", "content-encoding", "accept", "accept-encoding", "mcp-session-id",
    "mcp-protocol-version", "mcp-method", "mcp-name",
))


class RequestHeaders(BaseModel):
    headers: dict[str, str] = Field(default_factory=dict)

    @field_validator("headers")
    @classmethod
    def _sendable(cls, headers: dict[str, str]) -> dict[str, str]:
        problem = header_problem(headers)
        if problem is not None:
            raise ValueError(problem)
        return headers


def header_problem(headers: dict[str, str]) -> str | None:
    """Why ``headers`` cannot be sent as configured, or None."""
    seen: dict[str, str] = {}
    for name, value in headers.items():
        shown = repr(name[:64])
        if not _TOKEN.fullmatch(name):
            return (f"the header {shown} is no HTTP field name (letters, digits and !#$%&'*+-.^_`|~ only, no "
                    "space or colon)")
        folded = name.lower()
        if folded in seen:
            return (f"the header {shown} is {seen[folded]!r} again (HTTP field names are one whatever their "
                    "case: both would be sent, the server picking one); give it once, not twice")
        if folded in OWN_FIELDS:
            return (f"the header {shown} is one Sentinel writes itself on every request (framing, encoding "
                    "or the MCP session); remove it")
        bad = _NOT_SENT.search(value)
        if bad is not None:
            return (f"the value of the header {shown} holds U+{ord(bad.group()):04X} at position "
                    f"{bad.start() + 1}: a header value is visible ASCII text, spaces and tabs (a line break "
                    "would end the header, another character is not sent as written)")
        seen[folded] = name
    return None
