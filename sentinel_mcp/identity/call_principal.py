"""Who a tool call runs for: the principal whose reach, consents and audit rows it is."""

from __future__ import annotations

from typing import Callable, Mapping

from sentinel_mcp.core.decision import Origin
from sentinel_mcp.identity.principal import INTERNAL, OWNER, Principal


def call_principal(
    principal: Principal | str | None,
    session_id: str,
    origin: Origin,
    known: Mapping[str, Principal],
    session_owner: Callable[[str], Principal | None],
) -> Principal:
    """The one given (by name: as configured in ``known``; an unknown name reaches nothing), else the owner of
    its session (``session_owner``, then the name its id starts with: the solver's fetches, A2A tasks), else
    the owner for a client's or the CLI's call and Sentinel itself for its own; never Sentinel for a call from
    an A2A peer (origin ``a2a``), which without a principal reaches nothing."""
    if isinstance(principal, Principal):
        return principal
    if isinstance(principal, str):
        return known.get(principal) or Principal(principal, "token", tools=(), upstreams=())
    owner = session_owner(session_id)
    if owner is None and "/" in session_id:  # session ids start with their principal's name (A2A's too)
        owner = known.get(session_id.split("/", 1)[0])
    if owner is not None:
        return owner
    if origin == "a2a":  # a peer's call always names its peer: one that does not reaches nothing
        return Principal("a2a peer", "token", tools=(), upstreams=(), agent=True)
    return OWNER if origin in ("client", "cli") else INTERNAL
