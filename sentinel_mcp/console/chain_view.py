"""The audit log's hash chain as the Activity page shows it, per row: "verified", or "broken at row N".

Verified with ``audit_chain.verify_rows`` (what ``sentinel-mcp audit verify`` runs), per file of the store,
through this process's open database when it holds the file (never around it). The result is kept while the
chain heads do not move, so a page view re-verifies only after new rows were written.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sentinel_mcp.gateway.audit import audit_files
from sentinel_mcp.gateway.audit_chain import ChainReport, verify_file, verify_rows
from sentinel_mcp.gateway.audit_schema import HASHED


@dataclass
class ChainStatus:
    broken_row: int | None  # the first row that does not follow (None: the rows verify)
    problem: str | None  # the verifier's words (None: verified)

    def of(self, row_id: int) -> str:
        if self.problem is None:
            return "verified"
        if self.broken_row is None:
            return "chain end broken"  # rows at its end deleted, or its head changed
        return "verified" if row_id < self.broken_row else f"broken at row {self.broken_row}"


_CACHE: dict[str, tuple[Any, dict[str, ChainStatus]]] = {}


async def _verify_open(db: Any) -> tuple[Any, ChainReport]:
    heads = {c: (h, n) for c, h, n in await db.query("SELECT chain, hash, rows FROM audit_head")}
    rows = await db.query(f"SELECT id, {', '.join(HASHED)}, prev_hash, hash FROM audit ORDER BY id")
    # rows written after the heads were read are not the heads' yet: each chain is checked up to its head
    kept, seen = [], dict.fromkeys(heads, 0)
    for r in rows:
        chain = r[1]
        if chain in heads and seen[chain] >= heads[chain][1]:
            continue
        seen[chain] = seen.get(chain, 0) + 1
        kept.append(r)
    return tuple(sorted(heads.items())), verify_rows(kept, heads)


async def statuses(store: Path) -> dict[str, ChainStatus]:
    """chain name -> its status (a file's first break counts for every chain in that file)."""
    from sentinel_mcp.storage.open import find_open

    out: dict[str, ChainStatus] = {}
    for file in audit_files(store):
        db = find_open(file)
        try:
            if db is not None:
                heads = tuple(sorted((c, (h, n)) for c, h, n in
                                     await db.query("SELECT chain, hash, rows FROM audit_head")))
                cached = _CACHE.get(str(file))
                if cached is not None and cached[0] == heads:
                    out.update(cached[1])
                    continue
                heads, report = await _verify_open(db)
                chains = [c for c, _ in heads]
            else:
                report = await asyncio.to_thread(verify_file, file)
                chains = await asyncio.to_thread(_chains_of, file)
                heads = None
        except Exception as e:  # noqa: BLE001 - a log that cannot be read is not shown as verified
            report, chains = ChainReport(problem=f"could not be read: {e}"), []
            heads = None
        found = {c: ChainStatus(report.broken_row, report.problem) for c in chains}
        if heads is not None:
            _CACHE[str(file)] = (heads, found)
        out.update(found)
    return out


def _chains_of(file: Path) -> list[str]:
    from sentinel_mcp.storage.snapshot import read_connection

    with read_connection(file) as conn:
        return [r[0] for r in conn.execute("SELECT chain FROM audit_head")]


def status_of(found: dict[str, ChainStatus], row: dict[str, Any]) -> str:
    status = found.get(str(row.get("chain") or ""))
    if status is None:
        return "not chained"  # a row from an older, unchained log
    return status.of(int(row.get("id") or 0))
