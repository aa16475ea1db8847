"""The audit log as the console reads it: only through ``gateway.audit.read_audit`` (the CLI's reader), never
its storage, then filtered here. A principal reads its own rows; the owner may read everyone's. On a shared
PostgreSQL store (replicas, ``docs/cluster.md``) it reads the cluster's one audit table through this replica's
open log: every replica's rows (each named by its replica), not only this one's."""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sentinel_mcp.console import chain_view
from sentinel_mcp.console.form_body import FormRefused
from sentinel_mcp.console.query_params import choice, read_query
from sentinel_mcp.gateway.audit import AuditLog, read_audit

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from starlette.requests import Request

    from sentinel_mcp.console.web import ConsoleHost

MAX_FILTER = 200  # characters of a filter's text
SCAN = 5000  # newest rows read per page view (bounded): older ones are reached with a time filter
PAGE = 200
DECISIONS = ("allow", "deny", "ask", "error")
CHAIN_STATES = ("verified", "broken")
STAGES = ("guard", "fetch", "ask", "forward")


@dataclass
class Filters:
    session: str = ""
    tool: str = ""
    decision: str = ""
    since: str = ""  # ISO date/time as the browser's datetime-local sends it
    until: str = ""
    principal: str = ""  # the owner only: "" is every principal's
    chain: str = ""  # "verified" | "broken" ("" either)

    @classmethod
    def of(cls, request: Request) -> "Filters":
        """The Activity page's filters from its query (query_params: each at most once, bounded); a choice
        outside its set or a time that is none is refused, never read as no filter (every row)."""
        q = read_query(request, {name: MAX_FILTER for name in FILTERS})
        return cls(q["session"], q["tool"], choice(q["decision"], DECISIONS, "the decision filter"),
                   valid_instant(q["since"], "since"), valid_instant(q["until"], "until"), q["principal"],
                   choice(q["chain"], CHAIN_STATES, "the hash chain filter"))


FILTERS = ("session", "tool", "decision", "since", "until", "principal", "chain")


def valid_instant(text: str, name: str) -> str:
    """``text`` when it is "" or a date and time (as a datetime-local field sends it); otherwise refused."""
    if text and _instant(text) is None:
        raise FormRefused(400, f"refused: {name} is no date and time (YYYY-MM-DDTHH:MM)")
    return text


def _instant(text: str) -> float | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text).timestamp()
    except (ValueError, OverflowError, OSError):
        return None


def _timings(raw: Any) -> dict[str, float] | None:
    """The recorded latency split (``call_timings``): numbers only, whatever the row holds."""
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        return None
    if not isinstance(value, dict):
        return None
    return {k: float(v) for k, v in value.items() if k in STAGES and isinstance(v, (int, float))}


@dataclass(frozen=True)
class AuditSource:
    """Where the audit is read: the store's files (every gateway instance's log), or the cluster's table."""

    store: Path
    shared: AuditLog | None = None  # this replica's log open on the shared PostgreSQL store (None: files)
    key: bytes | None = None  # the rows' seal (``gateway/audit_seal.py``): an unsigned row is nobody's

    @classmethod
    def of(cls, runtime: ConsoleHost) -> "AuditSource":
        return cls(runtime.config.store_path, runtime.audit if runtime.config.store_url else None,
                   runtime.audit.key)

    async def read(self, tail: int, session: str | None = None,
                   principal: str | None = None) -> list[dict[str, Any]]:
        if self.shared is None:
            # a damaged instance's log: the others are shown; its chain's status says it is broken
            unreadable: list[str] = []
            rows = await read_audit(self.store, tail=tail, session=session, principal=principal,
                                    unreadable=unreadable, key=self.key)
            for problem in unreadable:
                log.warning("%s", problem)
            return rows
        # one table, every replica's chain; a row's chain is the replica that wrote it
        return [r | {"replica": r.get("chain")} for r in await self.shared.read(tail, session, principal)]

    async def statuses(self) -> dict[str, chain_view.ChainStatus]:
        if self.shared is None:
            return await chain_view.statuses(self.store, self.key)
        return await chain_view.shared_statuses(self.shared.db, self.key)


DECISION_KEY = re.compile(r"[0-9a-f]{32}")  # a call's decision id (core/audit_entry.new_decision_id)


def keyed(found: list[dict[str, Any]], viewer: Any = None) -> list[dict[str, Any]]:
    """Each row with its ``key``. The owner's (``viewer`` None or the owner): its gateway's chain and its id
    there (ids repeat across gateways' logs). Anyone else's: the call's decision id, random. Row ids are one
    sequence for every principal: two of bob's would count alice's rows between them."""
    if viewer is None or viewer.is_owner:
        return [r | {"key": f"{r.get('chain') or 'main'}.{r.get('id')}",
                     "timings": _timings(r.get("timings"))} for r in found]
    # a row of no decision id of that shape (an unchained log's "row<id>") gets none: it is never linked
    return [r | {"key": str(r.get("decision_id") or ""), "timings": _timings(r.get("timings"))}
            for r in found if DECISION_KEY.fullmatch(str(r.get("decision_id") or ""))]


def _status(chains: dict[str, chain_view.ChainStatus], row: dict[str, Any], viewer: Any) -> str:
    """The row's chain's status; "broken" for a row whose seal fails whatever its chain says (re-chained by
    the store's writer: ``gateway/audit_seal.py``). Where a chain breaks is the owner's to read: the row
    number is another sequence of every principal's rows (and the row may be another's)."""
    status = "broken" if row.get("seal") == "tampered" else chain_view.status_of(chains, row)
    if viewer is not None and not viewer.is_owner and status != "verified":
        return "broken"
    return status


async def rows(source: AuditSource, viewer: Any, f: Filters, limit: int = PAGE) -> list[dict[str, Any]]:
    """Newest first."""
    who = f.principal or None if viewer.is_owner else viewer.name
    found = keyed(await source.read(SCAN, session=f.session or None, principal=who), viewer)
    chains = await source.statuses()
    found = [r | {"chain_status": _status(chains, r, viewer)} for r in found]
    since, until = _instant(f.since), _instant(f.until)
    out = [r for r in reversed(found)
           if (not f.chain or (r["chain_status"] == "verified") == (f.chain == "verified"))
           if (not f.tool or f.tool.lower() in str(r.get("tool", "")).lower())
           and (not f.decision or r.get("decision") == f.decision)
           and (since is None or (r.get("ts") or 0) >= since)
           and (until is None or (r.get("ts") or 0) <= until)]
    return out[:limit]


async def row(source: AuditSource, viewer: Any, row_key: str) -> dict[str, Any] | None:
    who = None if viewer.is_owner else viewer.name
    for r in keyed(await source.read(SCAN, principal=who), viewer):
        if r["key"] == row_key:
            return r | {"chain_status": _status(await source.statuses(), r, viewer)}
    return None
