"""Passages a replica no longer reads because they were signed the older way, found and signed again when the
operator says so (``sentinel-mcp passages sign-existing``): never a row the cluster's key cannot vouch for.

A passage row's MAC covers its id since 4e53b6ed (``passage_rows.py``); rows signed before cover every other
column but not the id, and rows from before 77883ab5 have no MAC at all. Readers refuse both, so memories
from then are silently never read again. How a row is judged, with the cluster's key for "passages":
- ``current``: signed as today. Nothing to do.
- ``vouched``: its MAC is the older signature (every column but the id) made with this key, and no other row
  carries the same MAC (one copy of a row, not two). Signed again over its id with ``--yes``: the key says
  this cluster wrote exactly that content; only its id was unsigned, and a lone row cannot have been copied.
- ``copied``: an older signature carried by several rows: the older MAC cannot say which id is the
  original (a copy to a new id was exactly what it did not cover), so none is signed.
- ``unsigned``: no MAC. Written before rows were signed, or in SQL by someone without the key: nothing tells
  them apart, so it is refused (re-remember it, or delete it).
- ``forged``: a MAC that is neither signature (edited, planted, or another cluster's key). Refused.
Expired rows are left out (never read again either way). Each signing is a compare-and-set on the row's old
MAC (a row changed meanwhile is not signed) and bumps its namespace's generation (replicas rebuild their
vector matrices).
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from sentinel_mcp.search import passage_rows
from sentinel_mcp.storage import Statement
from sentinel_mcp.storage.row_signature import signed_row

PAGE = 2_000
KINDS = ("current", "vouched", "copied", "unsigned", "forged")
_SHOWN_IDS = 50  # ids listed per kind refused (the counts are whole)


@dataclass
class Survey:
    # kind -> namespace -> rows
    counts: dict[str, Counter[str]] = field(default_factory=lambda: {k: Counter() for k in KINDS})
    ids: dict[str, list[int]] = field(default_factory=lambda: {k: [] for k in KINDS})  # the first few
    signed: int = 0  # rows signed again (``--yes``)
    _vouched: list[tuple[Any, str, str, str]] = field(default_factory=list)  # (id, namespace, old, new)

    def add(self, kind: str, pid: Any, namespace: Any) -> None:
        self.counts[kind][str(namespace)] += 1
        if len(self.ids[kind]) < _SHOWN_IDS:
            self.ids[kind].append(pid)

    def total(self, kind: str) -> int:
        return sum(self.counts[kind].values())


def _older_fields(row: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """What the older signature covered (namespace .. embedder, the vector's sha256): ``COLUMNS`` order."""
    vector = row[11]
    if not isinstance(vector, (bytes, memoryview)):
        return None
    return (*row[1:11], hashlib.sha256(bytes(vector)).hexdigest())


async def survey(db: Any, key: bytes, now: float | None = None) -> Survey:
    """Every live row judged (module docstring); the vouched ones kept with their new MAC."""
    now = time.time() if now is None else now
    report = Survey()
    older: list[tuple[Any, Any, str, str]] = []  # (id, namespace, older mac, new mac): older signature holds
    after = -1
    while True:
        rows = await db.query(
            f"SELECT {passage_rows.COLUMNS} FROM passages WHERE id > ? AND (expires_at IS NULL OR "
            "expires_at > ?) ORDER BY id LIMIT ?", (after, now, PAGE))
        for row in rows:
            pid, namespace, mac = row[0], row[1], row[12]
            if passage_rows.Verifier(key).kept([row]):
                report.add("current", pid, namespace)
            elif mac is None:
                report.add("unsigned", pid, namespace)
            elif (type(pid) is int and (fields := _older_fields(row)) is not None
                  and signed_row(key, mac, passage_rows.PURPOSE, fields)):
                older.append((pid, namespace, mac, passage_rows.mac(key, row[:12])))
            else:
                report.add("forged", pid, namespace)
        if len(rows) < PAGE:
            break
        after = int(rows[-1][0])
    seen = Counter(mac for _, _, mac, _ in older)
    for pid, namespace, mac, new in older:
        if seen[mac] > 1:
            report.add("copied", pid, namespace)
        else:
            report.add("vouched", pid, namespace)
            report._vouched.append((pid, str(namespace), mac, new))
    return report


async def sign_vouched(db: Any, report: Survey) -> int:
    """Sign again every vouched row (its MAC still the one judged); their namespaces' generations bumped."""
    statements = [Statement("UPDATE passages SET mac = ? WHERE id = ? AND mac = ?", (new, pid, old))
                  for pid, _, old, new in report._vouched]
    namespaces = sorted({ns for _, ns, _, _ in report._vouched})
    statements += [Statement("UPDATE passage_ns SET generation = generation + 1 WHERE namespace = ?", (ns,))
                   for ns in namespaces]
    if not report._vouched:
        return 0
    results = await db.run(statements)
    report.signed = sum(r.rowcount for r in results[:len(report._vouched)])
    return report.signed
