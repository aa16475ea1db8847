"""Who may see the rulebase's version: whoever may read the rulebase itself (the resource
``sentinel://rulebase``, by its own rule: the owner, and a principal whose tools cover ``sentinel__*``).

The version is a hash of the rulebase's files: to anyone else it tells when the policy changed and, compared
with the hashes of known rulebases (the shipped ones), which policy is in force. So a principal that may not
read the rulebase sees no version anywhere: not in its ``sentinel_why_not`` proofs, not in the console's
views of its own calls (the proof, the audit row, a reason recorded before reasons stopped naming it), and
not in the request states it is handed (``gateway/input_rounds.py`` keys them).
"""

from __future__ import annotations

import re
from typing import Any

from sentinel_mcp.core.port import GatewayPort

RULEBASE_URI = "sentinel://rulebase"
# how an allow's reason named the version until 2026-12 (recorded audit rows still hold it)
_REASON_VERSION = re.compile(r" \(rulebase [0-9a-f]{1,64}\)")


def reads_rulebase(port: GatewayPort | None, principal: str | None) -> bool:
    """Whether ``principal`` (by name; None: the device owner at the CLI) may read the rulebase, and so its
    version. A name the gateway does not know, or no gateway to ask, reads nothing."""
    if principal is None:
        return True
    if port is None:
        return False
    try:
        who: Any = port.principal_for(principal, "", "builtin")
    except LookupError:
        return False
    return may_read(port, who)


def may_read(port: Any, who: Any) -> bool:
    """``reads_rulebase`` for a resolved principal (the console has one)."""
    if getattr(who, "is_owner", False) is True:
        return True
    try:  # the port's own answer (core/port.py): who may read sentinel://rulebase
        port.resource_upstream(RULEBASE_URI, who)
    except LookupError:
        return False
    return True


def proof_without_version(proof: Any) -> Any:
    """A proof as a non-reader sees it: without the version it was proved under."""
    if isinstance(proof, dict) and "rulebase" in proof:
        return {k: v for k, v in proof.items() if k != "rulebase"}
    return proof


def reason_without_version(reason: Any) -> Any:
    return _REASON_VERSION.sub("", reason) if isinstance(reason, str) else reason


def row_without_version(row: dict[str, Any]) -> dict[str, Any]:
    """An audit row as a non-reader sees it (the console's views of its own calls)."""
    shown = {**row, "policy_version": None}
    if "proof" in shown:
        shown["proof"] = proof_without_version(shown["proof"])
    if "reason" in shown:
        shown["reason"] = reason_without_version(shown["reason"])
    return shown
