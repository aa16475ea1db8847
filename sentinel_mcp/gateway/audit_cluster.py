"""The cluster's audit record on a shared PostgreSQL store: one hash chain per replica, plus anchors.

Each replica appends to its own chain (``audit.AuditLog`` with ``chain`` = the replica id), so replicas never
wait on each other's head. An anchor row commits every chain's head at one moment (``heads``: chain -> [hash,
rows]) and is itself chained to the anchor before it; replicas write one now and then (``anchor_loop``).
``verify_cluster`` checks every chain row by row, every anchor's hash, and that each anchor's heads are really
in the chains: a row deleted, changed or added before an anchor breaks either its chain or the anchor.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any, Iterator

from sentinel_mcp.gateway.audit import chain_hash
from sentinel_mcp.gateway.audit_chain import ChainReport, Marks, verify_rows
from sentinel_mcp.gateway.audit_schema import GENESIS, HASHED
from sentinel_mcp.storage import Statement, StorageError

log = logging.getLogger(__name__)

ANCHOR_EVERY = 5.0  # seconds between a replica's anchors (only when some chain moved)


def _anchor_text(ts: float, by: str, heads: dict[str, list[Any]]) -> str:
    return json.dumps([ts, by, heads], sort_keys=True, separators=(",", ":"))


# One statement, so one round trip in a transaction of its own (no BEGIN, no COMMIT: a statement is atomic,
# and durable when it answers). Its trigger (``audit_schema.audit_anchor_advance``, run as the schema's owner)
# moves the anchors' head from ``prev`` to ``new`` (its first row, when there is none yet, starts at ``new``
# only when ``prev`` is the genesis; else at the genesis, as a chain's head row starts) and lets the row in
# only then (the head's row locked and its hash checked again after a racing writer): never an anchor without
# its head, nor a head without its anchor; a serving role never writes the head itself.
_ANCHOR = "INSERT INTO audit_anchor (ts, by_chain, heads, prev_hash, hash) VALUES (?, ?, ?, ?, ?)"


async def write_anchor(db: Any, by: str) -> str | None:
    """Commit every chain's current head in one anchor row; None when nothing moved since the last anchor.
    Optimistic like the chains: the anchor head moves only from the hash this anchor was chained to."""
    for _ in range(5):
        heads = {
            c: [h, int(n)]
            for c, h, n in await db.query("SELECT chain, hash, rows FROM audit_head ORDER BY chain")
        }
        last = await db.query(
            "SELECT a.hash, a.heads FROM audit_anchor_head h JOIN audit_anchor a ON a.hash = h.hash"
        )
        prev = last[0][0] if last else GENESIS
        if last and json.loads(last[0][1]) == heads:
            return None
        ts = time.time()
        new = chain_hash(prev, _anchor_text(ts, by, heads))
        text = json.dumps(heads, sort_keys=True)
        results = await db.run([Statement(_ANCHOR, (ts, by, text, prev, new))])
        if results[0].rowcount == 1:
            return new
    return None


async def anchor_loop(db: Any, by: str, every: float = ANCHOR_EVERY) -> None:
    while True:
        await asyncio.sleep(every)
        try:
            await write_anchor(db, by)
        except StorageError as e:  # the chains go on; the next anchor covers this moment too
            log.warning("audit anchor not written: %s", e)
        except Exception:  # noqa: BLE001 - never ends the loop
            log.exception("audit anchor failed")


PAGE = 2_000  # rows read per query: a long-running cluster's record never has to fit in the verifier's memory


def _pages(db: Any, select: str) -> Iterator[tuple[Any, ...]]:
    """The rows of ``select`` (whose first column is ``id``) in id order, one page per query."""
    after = -1
    while True:
        rows = db.query_blocking(f"{select} WHERE id > ? ORDER BY id LIMIT ?", (after, PAGE))
        yield from rows
        if len(rows) < PAGE:
            return
        after = int(rows[-1][0])


def _anchor_marks(db: Any) -> tuple[Marks, int, str | None]:
    """The anchors' own chain checked, and what they say each chain's hash was after so many rows (one entry
    per position: a chain that did not move between anchors is the same position); their count; a problem."""
    marks: Marks = {}
    prev, count = GENESIS, 0
    for aid, ts, by, heads_text, prev_hash, h in _pages(
        db, "SELECT id, ts, by_chain, heads, prev_hash, hash FROM audit_anchor"
    ):
        try:
            anchored = json.loads(heads_text)
        except (TypeError, ValueError):
            anchored = None
        heads = _heads(anchored)
        if heads is None:  # a row whose hash was recomputed over what no anchor writes
            return marks, count, f"anchor {aid}: its heads are not chain -> [hash, rows] (altered)"
        if prev_hash != prev or h != chain_hash(prev_hash, _anchor_text(ts, by, anchored)):
            return marks, count, f"anchor {aid}: does not follow the anchor before it, or was altered"
        for chain, head_hash, n in heads:
            said = (GENESIS, "the chain's start") if n == 0 else marks.get(chain, {}).get(n)
            if said is not None and said[0] != head_hash:
                return marks, count, (
                    f"anchor {aid}: chain {chain} had {n} rows ending in {head_hash[:12]}… then, which "
                    f"{said[1]} does not say (rows changed or removed)"
                )
            if n:
                marks.setdefault(chain, {}).setdefault(n, (head_hash, f"anchor {aid}"))
        prev, count = h, count + 1
    head = db.query_blocking("SELECT hash, rows FROM audit_anchor_head")
    if (head[0][0] if head else GENESIS) != prev or (int(head[0][1]) if head else 0) != count:
        return marks, count, "the anchors' head does not match the anchors (anchor rows deleted)"
    return marks, count, None


def _heads(anchored: Any) -> list[tuple[str, str, int]] | None:
    """An anchor's heads as ``write_anchor`` writes them (chain -> [hash text, rows >= 0]); None otherwise."""
    if not isinstance(anchored, dict):
        return None
    out = []
    for chain, head in anchored.items():
        if not (isinstance(head, list) and len(head) == 2 and isinstance(head[0], str)
                and type(head[1]) is int and head[1] >= 0):
            return None
        out.append((chain, head[0], head[1]))
    return out


def verify_cluster(db: Any, key: bytes | None = None) -> ChainReport:
    """Every chain and every anchor in the shared store (blocking; for ``sentinel-mcp audit verify``). Both
    tables are read a page at a time; what is kept is one hash per chain and one per anchored position.
    ``key``: the audit's seal key, every row's seal checked (the anchors share the database with the rows,
    so the seal is what tells a row edited and re-chained, anchors recomputed, by the database's writer)."""
    heads = {c: (h, int(n)) for c, h, n in db.query_blocking("SELECT chain, hash, rows FROM audit_head")}
    marks, anchors, problem = _anchor_marks(db)
    if problem is not None:
        return ChainReport(problem=problem, anchored=anchors)
    sealed = ", mac" if key is not None else ""
    rows = _pages(db, f"SELECT id, {', '.join(HASHED)}, prev_hash, hash{sealed} FROM audit")
    report = verify_rows(rows, heads, marks, key)
    report.anchored = anchors
    return report


def verify_server(url: str, key: bytes | None = None) -> ChainReport:
    from sentinel_mcp.storage.open import open_database, release_blocking

    db = open_database(url, "audit")
    try:
        return verify_cluster(db, key)
    finally:
        release_blocking(db)
