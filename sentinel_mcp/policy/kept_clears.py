"""The operator's look at the kept facts (``kept_effects.py``) and their clear: ``sentinel-mcp kept``.

A kept fact never expires (airline.pl's "a certificate was sent for this flight" holds for good). Only the
operator, at the command line with the config (its store and, on a server store, the cluster's seal key that
signs the rows), lists them and clears one, by its exact text as listed. Each clear is recorded in
``kept_clears`` in the transaction of the delete (who, when, why, and where the fact came from), so no clear
goes unrecorded. Nothing a client sends reaches here: the kept scope is no principal's conversation (no tool,
no console page takes it), and a client's look does not show it.

A cleared fact is gone for every conversation: replicas of a server store reload their mirrors on their next
decision (the delete moves the kept facts' counter, ``Knowledge._follow_kept``); a gateway of a SQLite store
sees the clears table grow within a second (``Knowledge.follow_clears``, from ``store_upkeep.py``) and
reloads them. Until then a decision may still see the fact: it denies more, never less.
"""

from __future__ import annotations

import time
from typing import Any

from sentinel_mcp.core.stored_text import restored as _back
from sentinel_mcp.core.stored_text import restored_opt, stored_opt
from sentinel_mcp.core.stored_text import stored as _kept
from sentinel_mcp.policy.fact_store import Fact, FactStore
from sentinel_mcp.policy.kept_effects import KEPT_SCOPE
from sentinel_mcp.storage import Statement

MAX_REASON = 2_000  # characters of the operator's reason kept with a clear
_RECORD = ("INSERT INTO kept_clears (cleared_at, fact, cleared_by, established_at, source_tool, reason) "
           "VALUES (?,?,?,?,?,?)")


async def kept_facts(store: FactStore) -> list[Fact]:
    """Every kept fact a proof would read (a server store's: signed by the cluster; others are absent)."""
    return await store.valid(KEPT_SCOPE)


async def clear(store: FactStore, fact: str, by: str, reason: str = "") -> Fact | None:
    """Delete the kept fact whose text is exactly ``fact``, recording the clear; None when there is none (a
    pattern or a near text clears nothing)."""
    found = next((f for f in await kept_facts(store) if f.fact == fact), None)
    if found is None:
        return None
    record = Statement(_RECORD, (time.time(), _kept(fact), _kept(by[:200]), found.established_at,
                                 stored_opt(found.source_tool), _kept(reason[:MAX_REASON])))
    await store.delete(KEPT_SCOPE, [fact], also=(record,))
    return found


async def clears(store: FactStore, limit: int = 1000) -> list[dict[str, Any]]:
    """The recorded clears, newest first."""
    rows = await store.db.query(
        "SELECT cleared_at, fact, cleared_by, established_at, source_tool, reason FROM kept_clears "
        "ORDER BY id DESC LIMIT ?", (limit,))
    return [{"cleared_at": at, "fact": _back(fact), "cleared_by": _back(by), "established_at": established,
             "source_tool": restored_opt(tool), "reason": restored_opt(reason)}
            for at, fact, by, established, tool, reason in rows]


async def last_clear(store: FactStore) -> int:
    """The number of the latest clear (0: none): grows with every clear."""
    rows = await store.db.query("SELECT COALESCE(MAX(id), 0) FROM kept_clears")
    return int(rows[0][0]) if rows else 0
