"""The audit log's hash chain as the Activity page shows it, per row: "verified", or "broken at row N".

Verified with ``audit_chain.verify_rows``'s rules (what ``sentinel-mcp audit verify`` runs), per file of the
store, through this process's open database when it holds the file (never around it), incrementally: a page
view checks the rows written since the last one (and the whole file again every ``FULL_EVERY`` seconds, so
an old row altered meanwhile is found too). With the audit's seal key (``gateway/audit_seal.py``), each
row's seal is checked as verify checks it: a row relabelled and re-chained by the store's writer, or whose
MAC was wiped after sealed rows, breaks its chain there (before, the chain read "verified" while the row's
MAC failed).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sentinel_mcp.gateway.audit import audit_files, canonical, chain_hash
from sentinel_mcp.gateway.audit_chain import ChainReport, verify_file
from sentinel_mcp.gateway.audit_schema import GENESIS, HASHED
from sentinel_mcp.gateway.audit_seal import TAMPERED, UNSIGNED, verdict


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


FULL_EVERY = 300.0  # seconds: the whole file is verified again at least this often (an old row altered)


@dataclass
class _Verified:
    """How far a file's rows were verified (new rows are checked from there: each page view costs the rows
    written since, not the whole log)."""

    heads: tuple[Any, ...]
    last_id: int
    last: dict[str, str]  # chain -> hash of its last verified row
    counts: dict[str, int]
    broken_row: int | None
    problem: str | None
    full_at: float
    sealed: set[str] = field(default_factory=set)  # chains with a sealed row so far (a later unsigned: wiped)


_CACHE: dict[str, _Verified] = {}
_CLOSED: dict[str, tuple[tuple[int, int], ChainReport, list[str]]] = {}


def _check(rows: list[tuple[Any, ...]], state: _Verified, key: bytes | None = None) -> None:
    """``rows``: (id, *HASHED, prev_hash, hash), then ``mac`` with ``key``."""
    for row in rows:
        mac = None
        if key is not None:
            row, mac = row[:-1], row[-1]
        rid, values, prev_hash, row_hash = row[0], tuple(row[1:1 + len(HASHED)]), row[-2], row[-1]
        state.last_id = rid
        if state.problem is not None:
            continue
        chain = values[0]
        if key is not None:
            seal = verdict(key, {**dict(zip(HASHED, values)), "mac": mac})
            if seal == TAMPERED or (seal == UNSIGNED and chain in state.sealed):
                state.broken_row, state.problem = rid, f"row {rid} (chain {chain}): its seal (MAC) " + (
                    "does not match its content" if seal == TAMPERED else "was removed")
                continue
            if seal != UNSIGNED:
                state.sealed.add(chain)
        if prev_hash != state.last.get(chain, GENESIS) or row_hash != chain_hash(
            prev_hash, canonical(values)
        ):
            state.broken_row, state.problem = rid, f"row {rid} (chain {chain}) does not follow its chain"
            continue
        state.last[chain] = row_hash
        state.counts[chain] = state.counts.get(chain, 0) + 1


def _columns(key: bytes | None) -> str:
    return f"id, {', '.join(HASHED)}, prev_hash, hash" + (", mac" if key is not None else "")


async def _verify_open(db: Any, file: Path, seal: bytes | None = None) -> _Verified:
    heads = {c: (h, n) for c, h, n in await db.query("SELECT chain, hash, rows FROM audit_head")}
    key = tuple(sorted(heads.items()))
    state = _CACHE.get(str(file))
    if state is not None and state.heads == key:
        return state
    now = time.monotonic()
    if state is None or now - state.full_at > FULL_EVERY or (state.problem and state.broken_row is None):
        state = _Verified(key, 0, {}, {}, None, None, now)
    rows = await db.query(f"SELECT {_columns(seal)} FROM audit WHERE id > ? ORDER BY id", (state.last_id,))
    # rows written after the heads were read are not the heads' yet: each chain is checked up to its head
    seen = dict(state.counts)
    kept = []
    for r in rows:
        chain = r[1]
        if chain in heads and seen.get(chain, 0) >= heads[chain][1]:
            break
        seen[chain] = seen.get(chain, 0) + 1
        kept.append(r)
    _check(kept, state, seal)
    state.heads = key
    if state.problem is None:
        for chain, (head_hash, head_rows) in heads.items():
            if state.last.get(chain, GENESIS) != head_hash or state.counts.get(chain, 0) != head_rows:
                state.problem = f"chain {chain}: rows at its end were deleted or its head was changed"
        if set(state.last) - set(heads):
            state.problem = "a chain has rows but no head (head deleted)"
    _CACHE[str(file)] = state
    return state


async def statuses(store: Path, seal: bytes | None = None) -> dict[str, ChainStatus]:
    """chain name -> its status (a file's first break counts for every chain in that file); ``seal``: the
    audit's seal key, every row's seal checked too."""
    from sentinel_mcp.storage.open import find_open

    out: dict[str, ChainStatus] = {}
    for file in audit_files(store):
        db = find_open(file)
        try:
            if db is not None:
                state = await _verify_open(db, file, seal)
                report = ChainReport(broken_row=state.broken_row, problem=state.problem)
                chains = [c for c, _ in state.heads]
            # an earlier gateway's log (or another process's): verified again only when the file changed
            else:
                stat = file.stat()
                mark = (stat.st_mtime_ns, stat.st_size)
                closed = _CLOSED.get(str(file))
                if closed is None or closed[0] != mark:
                    closed = (
                        mark,
                        await asyncio.to_thread(verify_file, file, None, seal),
                        await asyncio.to_thread(_chains_of, file),
                    )
                    _CLOSED[str(file)] = closed
                _mark, report, chains = closed
        except Exception as e:  # noqa: BLE001 - a log that cannot be read is not shown as verified
            report, chains = ChainReport(problem=f"could not be read: {e}"), []
        found = {c: ChainStatus(report.broken_row, report.problem) for c in chains}
        out.update(found)
    return out


async def _verify_chain(db: Any, chain: str, head: tuple[str, int], seal: bytes | None = None) -> _Verified:
    """One replica's chain in the shared store, from where the last page view left it. By chain, not by
    id: replicas' rows commit out of id order, but a chain's rows commit in order (each moves its head)."""
    key = f"shared:{id(db)}:{chain}"  # the store this replica has open (one per process, but tests run many)
    state = _CACHE.get(key)
    mark = ((chain, head),)
    if state is not None and state.heads == mark:
        return state
    now = time.monotonic()
    if state is None or now - state.full_at > FULL_EVERY or state.problem is not None:
        state = _Verified(mark, 0, {}, {}, None, None, now)
    rows = await db.query(
        f"SELECT {_columns(seal)} FROM audit WHERE chain = ? AND id > ? ORDER BY id", (chain, state.last_id),
    )
    # rows after the head read: next time
    _check(rows[: max(0, head[1] - state.counts.get(chain, 0))], state, seal)
    state.heads = mark
    if state.problem is None and (
        state.last.get(chain, GENESIS) != head[0] or state.counts.get(chain, 0) != head[1]
    ):
        state.problem = f"chain {chain}: rows at its end were deleted or its head was changed"
    _CACHE[key] = state
    return state


async def shared_statuses(db: Any, seal: bytes | None = None) -> dict[str, ChainStatus]:
    """chain (replica) -> its status, for the cluster's one audit table on PostgreSQL (``audit_cluster.py``;
    ``sentinel-mcp audit verify`` checks the anchors too); ``seal``: every row's seal checked too."""
    heads = {c: (h, int(n)) for c, h, n in await db.query("SELECT chain, hash, rows FROM audit_head")}
    out: dict[str, ChainStatus] = {}
    for chain, head in heads.items():
        try:
            state = await _verify_chain(db, chain, head, seal)
            out[chain] = ChainStatus(state.broken_row, state.problem)
        except Exception as e:  # noqa: BLE001 - a chain that cannot be read is not shown as verified
            out[chain] = ChainStatus(None, f"could not be read: {e}")
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
