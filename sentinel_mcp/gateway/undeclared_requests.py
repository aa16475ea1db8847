"""Requests an upstream sends its client that Sentinel never declared it answers: refused by Sentinel, with
the cause, and audited, as every other refused push is (``push_refusals.py``).

Sentinel answers an upstream's ``ping`` and the requests it declared at the handshake (a callback handed to
the SDK: sampling, elicitation, and roots only on a connection serving one principal, ``relay_permits``);
the lean calls' path answers the requests on a call's own stream through the same screen
(``lean_stream_requests``).
Anything else the SDK answered by itself, with no trace: a shared connection's ``roots/list`` ("List roots
not supported"), a method no MCP version has ("Method not found"). A hostile upstream probes with exactly
those. So every request reaches ``screen`` first (the one door the SDK's session opens to a server's
requests, ``ScreenedClient``): one that is not ``ping`` nor of a declared kind is refused there, before the
SDK parses it, whatever its method; a declared one goes on to its callback, which routes it to the call it
belongs to (``upstream_relays``). On a 2026-07-28 connection every request of the server's own is refused:
the era asks a client by input request inside a call's result (``input_rounds``), never by a request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Mapping

from mcp import Client
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from mcp.types import METHOD_NOT_FOUND, ErrorData

from sentinel_mcp.core.caller_link import refusal
from sentinel_mcp.gateway.relay_permits import ELICITATION, ROOTS, SAMPLING

# the request methods of the kinds Sentinel may declare (``relay_permits``' names)
KINDS = {"sampling/createMessage": SAMPLING, "elicitation/create": ELICITATION, "roots/list": ROOTS}
ALWAYS = frozenset({"ping"})  # answered by the SDK, as a client must (it tells the upstream nothing)
OTHER = "other"  # the audit kind of a request of a method Sentinel relays under no kind
NOT_DECLARED = "not_declared"  # a known kind the connection was not told Sentinel answers
UNKNOWN_METHOD = "unknown_method"
NOT_IN_ERA = "not_in_era"  # a 2026-07-28 server's request of its own (the SDK knows no method of it there)
METHOD_CHARS = 80  # of a method's name, in a refusal's reason (ASCII-escaped: the upstream wrote it)

# ``screen(method)``: None to answer as declared, else the refusal sent back (audited already)
Screen = Callable[[str], Awaitable[ErrorData | None]]


def kind_of(method: str) -> str:
    return KINDS.get(method, OTHER)


def undeclared(method: str, declared: frozenset[str], modern: bool = False) -> str | None:
    """The audit cause of refusing a request of ``method`` on a connection that declared ``declared`` (kinds),
    or None: it is answered. ``modern``: the connection speaks 2026-07-28, whose servers ask a client only by
    input request (inside a call's result): a request of their own is none of the era's, whatever it asks."""
    if modern:
        return NOT_IN_ERA
    if method in ALWAYS:
        return None
    kind = KINDS.get(method)
    if kind is None:
        return UNKNOWN_METHOD
    return None if kind in declared else NOT_DECLARED


def method_said(method: str) -> str:
    """The upstream's method name as a reason shows it: bounded, every character past ASCII escaped."""
    return ascii(method[:METHOD_CHARS]) + ("..." if len(method) > METHOD_CHARS else "")


def refused_request(method: str, cause: str) -> ErrorData:
    """What the upstream hears: Sentinel's words, the code JSON-RPC gives the fault (a method no one answers:
    "method not found"; a kind not declared: what the SDK answers a capability a client lacks)."""
    what = f"a {method_said(method)} request"
    if cause == NOT_DECLARED:
        return refusal(what, "this connection was not told Sentinel answers it")
    why = "Sentinel answers no request of that method"
    if cause == NOT_IN_ERA:
        why = "a 2026-07-28 server asks its client by input request, never by a request of its own"
    unknown = refusal(what, why)
    return unknown.model_copy(update={"code": METHOD_NOT_FOUND})


async def screened(client: Client, method: str) -> ErrorData | None:
    """``client``'s screen of a request of ``method`` (the lean calls' path asks it as the SDK's does)."""
    screen = client.screen if isinstance(client, ScreenedClient) else None
    return None if screen is None else await screen(method)


@dataclass
class ScreenedClient(Client):
    """The SDK's client, every request its server sends screened (``screen``) before the session answers."""

    screen: Screen | None = None

    async def _build_session(self, exit_stack: Any) -> ClientSession:
        session = await super()._build_session(exit_stack)
        screen = self.screen
        if screen is None:
            return session
        inner = session._on_request  # bound: the session hands it to its dispatcher when it is entered

        async def on_request(dctx: Any, method: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
            refused = await screen(method)
            if refused is not None:
                raise MCPError.from_error_data(refused)
            return await inner(dctx, method, params)

        session._on_request = on_request  # type: ignore[method-assign]
        return session
