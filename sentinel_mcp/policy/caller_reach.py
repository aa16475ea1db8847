"""Which tools a principal's own look into the policy may read facts from: those it may call itself.

A tool outside a principal's reach (config ``principals[].tools`` / ``upstreams``) is unknown to it: it can
neither list nor call it. The policy still fetches from such a tool to decide a call the principal may make
(the guard's own fetches run as Sentinel), but what those fetches read is not the principal's to see
(``withheld_facts.py``). Reach is the gateway's own check (``Principal.may_reach`` on the tool's identity);
a name the catalog does not hold is not reachable, unless the principal may reach everything.
"""

from __future__ import annotations

from typing import Any

from sentinel_mcp.core.port import GatewayPort
from sentinel_mcp.policy.withheld_facts import ReachFn, WithheldFn, Withholding


def reach_of(port: GatewayPort | None, principal: str) -> ReachFn | None:
    """``principal``'s reach over tool names (exposed names or identities), or None when there is no gateway
    to ask (nothing can be fetched then, and no caller's reach is configured)."""
    if port is None:
        return None
    # by name as configured; a name the gateway does not know, or cannot resolve yet, reaches nothing
    try:
        who: Any = port.principal_for(principal, "", "builtin")
    except LookupError:
        return lambda tool: False
    if getattr(who, "unrestricted", False) is True:
        return lambda tool: True

    def reaches(tool: str) -> bool:
        exposed = port.find_tool(tool)
        ref = port.identity_of(exposed.name) if exposed is not None else None
        may_reach = getattr(who, "may_reach", None)
        return ref is not None and callable(may_reach) and bool(may_reach(ref.server, ref.tool))

    return reaches


def withholding_for(
    withheld: WithheldFn | None, port: GatewayPort | None, principal: str | None
) -> Withholding | None:
    """What ``principal``'s own look into the facts leaves out (None: nothing to leave out, or the device
    owner at the CLI): the one rule for its policy tools and the console's pages alike."""
    if principal is None:
        return None
    reaches = reach_of(port, principal)
    if withheld is None and reaches is None:
        return None
    return Withholding(withheld, principal, reaches)
