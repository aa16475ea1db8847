"""One audit event of one call, as every area writes it (the gateway's log, the TLS front's refusals).

The log itself (``gateway/audit.py``) stores, redacts and chains these; this record is the contract."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from sentinel_mcp.core.random_pool import uuid7_hex


@dataclass(slots=True)
class AuditEntry:
    """One event of one call (plain data: built on every call)."""

    session: str
    tool: str
    decision: str  # allow | deny | ask | error
    outcome: str  # forwarded | ok | tool_error | denied | asked | cancelled | timeout | upstream_error | ...
    ts: float = field(default_factory=time.time)
    client: str | None = None
    origin: str = "client"
    upstream: str | None = None
    arg_digest: str | None = None
    arguments: Any = None
    reason: str | None = None
    proof: Any = None
    policy_version: str | None = None
    latency_ms: float | None = None
    error: str | None = None
    decision_id: str = ""
    event: str = "final"
    principal: str | None = None  # who the call ran for
    timings: dict[str, float] | None = None  # ms in guard / fetch / ask / forward (``gateway/call_timings``)
    sensitive: frozenset[str] = frozenset()  # argument names the tool declares secret (not stored)


def new_decision_id() -> str:
    return uuid7_hex()  # time first: the audit log's index on it grows at its end
