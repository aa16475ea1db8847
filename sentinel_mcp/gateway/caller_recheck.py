"""A call's caller checked again right before the call is sent upstream.

A request is authenticated when it arrives, but its call may then wait inside Sentinel for long: for a slot of
its upstream's ``max_in_flight`` or its party's turn there, for the writes it depends on, for a person's
answer. A credential that can stop holding meanwhile (the owner's token or console secret replaced after a
leak, a client certificate revoked or expired, its CA taken out of the bundle) had its queued calls still
sent, as its principal, and a one-piece answer still delivered. The HTTP host leaves the request's own check
in the scope (``identity.resolver.RECHECK_KEY``, only for such credentials) and the front puts it on the
call; the pipeline asks it once the call has waited, just before the upstream would get it."""

from __future__ import annotations

from typing import Any, Callable

from sentinel_mcp.core.display_text import compose, safe_text
from sentinel_mcp.core.errors import GatewayError
from sentinel_mcp.identity.resolver import RECHECK_KEY, AuthFailed

OUTCOME = "credentials_lapsed"  # the audit row's outcome and the answer's error kind


class CallerLapsed(GatewayError):
    """The caller's credentials stopped holding while its call waited: the call was not sent."""


def recheck_of(request: object) -> Callable[[], Any] | None:
    """The HTTP host's check of the request's credentials (None: stdio, in-process, a credential that holds
    for the process's life)."""
    scope = getattr(request, "scope", None)
    found = scope.get(RECHECK_KEY) if isinstance(scope, dict) else None
    return found if callable(found) else None


def recheck_caller(recheck: Callable[[], Any] | None) -> None:
    """Raise ``CallerLapsed`` when ``recheck`` says the caller's credentials no longer hold."""
    if recheck is None:
        return
    try:
        recheck()
    except AuthFailed as e:
        raise CallerLapsed(compose(
            "refused: the credentials this call was sent with no longer hold (", safe_text(str(e), 300),
            "); it waited inside Sentinel and was not sent to its upstream",
        )) from None
