"""Which requests an upstream may send the client through Sentinel while it works on a call.

An upstream's request reaches past its own tools: a question goes to the user (marked as the server's), a
sampling request has the client's model write for the server (the user's model, their quota, words the
model may take from the conversation), a roots request tells it the client's folders. Without a rule, any
configured server could do all three on any call Sentinel allowed. So each server's config says which it may
send (``relays``); by default a process Sentinel starts itself or a server on loopback may send all three, and
a server beyond loopback (someone else's service, as ``annotation_trust`` has it) only questions. A request
not permitted is refused at once, whatever the client could answer, and the refusal is recorded with its call.
A built-in is Sentinel's own code: it may ask what it needs.

Roots go further than the call: an upstream keeps what it learns, and a server told alice's folders in her
call acts on them in bob's when one connection (one process, one MCP session) serves both. So roots are
relayed only on a connection that serves one principal (``connection_relays``): a server only one principal
may reach, or a principal's own session of a server kept ``per_principal``. A connection that may carry the
calls of several is not told Sentinel has roots (the capability is not declared) and a roots request on it
is refused, whatever its ``relays`` lists (said once in the log at start). Where one principal alone is
served, the default stays: that principal's own folders go to a process its operator chose to start (or a
server on loopback), whose tool calls carry as much already.
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


def connection_relays(target: Any, shared: bool) -> frozenset[str]:
    """What a server may ask on one connection: ``permitted_relays``, without roots when the connection may
    carry the calls of more than one principal (``shared``). A built-in asks as its call's own code."""
    permitted = permitted_relays(target)
    if shared and isinstance(target, (StdioServer, RemoteServer)):
        return permitted - {ROOTS}
    return permitted


def shared_roots_refused(server: str) -> str:
    return (f"the server {server} may not ask for roots through Sentinel: its connection serves more than "
            f"one principal, and one principal's roots would be kept for the others' calls (set "
            f"\"isolation\": \"per_principal\" on it to give each principal's own session its own roots)")


def refused_kind(server: str, target: Any, kind: str, shared: bool) -> str | None:
    """Why ``server`` may not send a ``kind`` request on this connection, or None."""
    if kind in connection_relays(target, shared):
        return None
    if kind == ROOTS and shared and ROOTS in permitted_relays(target):
        return shared_roots_refused(server)
    return not_permitted(server, kind)


def relay_kind(request: Any) -> str:
    """The permit a request needs (a URL elicitation, or anything unknown, is a question)."""
    asked = capability_asked(request)
    return ELICITATION if asked == URL_ELICITATION else asked


def not_permitted(server: str, kind: str) -> str:
    return (f"the server {server} may not send {kind} requests through Sentinel (its configuration's "
            f"\"relays\" does not list {kind!r})")


def unpermitted_request(server: str, target: Any, requests: dict[str, Any] | None,
                        shared: bool = False) -> str | None:
    """Why a 2026-era upstream's input requests cannot be relayed (one of them is a kind it may not send on
    this connection), or None."""
    for request in (requests or {}).values():
        refused = refused_kind(server, target, relay_kind(request), shared)
        if refused is not None:
            return refused
    return None
