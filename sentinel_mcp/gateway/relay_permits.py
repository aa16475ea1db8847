"""Which requests an upstream may send the client through Sentinel while it works on a call.

An upstream's request reaches past its own tools: a question goes to the user (marked as the server's), a
sampling request has the client's model write for the server (the user's model, their quota, words the
model may take from the conversation), a roots request tells it the client's folders. Without a rule, any
configured server could do all three on any call Sentinel allowed. So each server's config says which it may
send (``relays``); by default a process Sentinel starts itself or a server on loopback may send all three, and
a server beyond loopback (someone else's service, as ``annotation_trust`` has it) only questions. A request
not permitted is refused at once, whatever the client could answer, and the refusal is recorded with its call.
A built-in is Sentinel's own code: it may ask what it needs.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from sentinel_mcp.config import RemoteServer, StdioServer, loopback_host
from sentinel_mcp.gateway.input_rounds import ROOTS, SAMPLING, URL_ELICITATION, capability_asked

ELICITATION = "elicitation"
ALL = frozenset({ELICITATION, SAMPLING, ROOTS})
QUESTIONS_ONLY = frozenset({ELICITATION})


def permitted_relays(target: Any) -> frozenset[str]:
    """What a configured server may ask through Sentinel (``relays``, or the default for where it runs)."""
    if isinstance(target, (StdioServer, RemoteServer)) and target.relays is not None:
        return frozenset(target.relays)
    if isinstance(target, RemoteServer):
        return ALL if loopback_host(urlsplit(target.url).hostname) else QUESTIONS_ONLY
    return ALL


def relay_kind(request: Any) -> str:
    """The permit a request needs (a URL elicitation, or anything unknown, is a question)."""
    asked = capability_asked(request)
    return ELICITATION if asked == URL_ELICITATION else asked


def not_permitted(server: str, kind: str) -> str:
    return (f"the server {server} may not send {kind} requests through Sentinel (its configuration's "
            f"\"relays\" does not list {kind!r})")


def unpermitted_request(server: str, target: Any, requests: dict[str, Any] | None) -> str | None:
    """Why a 2026-era upstream's input requests cannot be relayed (one of them is a kind it may not send),
    or None."""
    permitted = permitted_relays(target)
    for request in (requests or {}).values():
        kind = relay_kind(request)
        if kind not in permitted:
            return not_permitted(server, kind)
    return None
