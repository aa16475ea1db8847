"""Who may read the rulebase in the console (its version, files, history, diffs and check): whoever may read
the resource ``sentinel://rulebase`` over MCP, by the resource's own rule (``Principal.may_read`` of the
upstream serving it: a ``tools`` list narrower than ``sentinel__*`` reads no rulebase), and the owner, who
sets it.

A check names the tools the rulebase binds and guards; a reader whose reach is limited sees only the problems
about tools in its reach (or about no tool), as its own tools would tell it of no other.
"""

from __future__ import annotations

from typing import Any

from sentinel_mcp.identity.principal import Principal
from sentinel_mcp.policy.caller_reach import reach_of
from sentinel_mcp.policy.guard import PolicyGuard
from sentinel_mcp.policy.version_readers import may_read

OUT_OF_REACH = (
    "Sentinel's rulebase is outside your reach (your tools do not read sentinel://rulebase): its versions, "
    "files and check are not shown"
)


def may_read_rulebase(gateway: Any, principal: Principal) -> bool:
    """The one rule (``policy/version_readers.py``): also whether the principal sees the rulebase's version
    in its own calls' rows."""
    return may_read(gateway, principal)


def problems_in_reach(guard: PolicyGuard, principal: Principal, problems: list[Any]) -> list[Any]:
    """The check's problems ``principal`` may be told of: all of them when it reaches every tool, else those
    naming no tool or a tool in its reach (``caller_reach.reach_of``, the rule its policy tools keep)."""
    if principal.unrestricted:
        return problems
    reaches = reach_of(guard.port, principal.name)
    if reaches is None:
        return problems
    return [p for p in problems if p.tool is None or reaches(p.tool)]
