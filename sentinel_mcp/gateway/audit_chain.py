"""Verify the audit log's hash chain (``sentinel-mcp audit verify``): the first row that does not follow."""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from sentinel_mcp.gateway.audit import canonical
from sentinel_mcp.gateway.audit_schema import GENESIS, HASHED
from sentinel_mcp.gateway.audit_seal import TAMPERED, UNSIGNED, verdict


@dataclass
class ChainReport:
    rows: int = 0
    chains: int = 0
    broken_row: int | None = None  # id of the first row that breaks its chain
    problem: str | None = None
    file: Path | None = None  # the file the problem is in
    files: int = 1
    counts: dict[str, int] = field(default_factory=dict)  # chain -> rows found (one file)
    anchored: int = 0  # anchor records checked (``audit_anchor_check.py``), 0 when not anchored
    unsealed: int = 0  # rows from before the seal (checked with a key: ``audit_seal.py``)

    @property
    def ok(self) -> bool:
        return self.problem is None


def _hash(prev: str, text: str) -> str:
    return hashlib.sha256((prev + text).encode("utf-8", "surrogatepass")).hexdigest()


Marks = dict[str, dict[int, tuple[str, str]]]  # chain -> rows -> (hash after so many rows, where it was said)


def verify_rows(
    rows: Iterable[tuple[Any, ...]], heads: dict[str, tuple[str, int]], marks: Marks | None = None,
    key: bytes | None = None,
) -> ChainReport:
    """``rows``: (id, *HASHED, prev_hash, hash) in id order, then ``mac`` with ``key``; ``heads``: chain ->
    (hash, rows) as stored; ``marks``: what the anchor (kept outside the data dir) says each chain's hash was
    after so many rows. ``key``: each row's seal checked too (``audit_seal.py``): one that fails, or a row
    without one after a sealed row of its chain, is an edit by someone who could re-chain (the store's
    writer) but holds no seal key."""
    report = ChainReport()
    marks = marks or {}
    last: dict[str, str] = {}
    counts: dict[str, int] = {}
    sealed: set[str] = set()  # chains with a sealed row so far
    for row in rows:
        if key is not None:
            row, mac = row[:-1], row[-1]
        rid, values, prev_hash, row_hash = row[0], tuple(row[1:1 + len(HASHED)]), row[-2], row[-1]
        chain = values[0]
        if key is not None:
            seal = verdict(key, {**dict(zip(HASHED, values)), "mac": mac})
            if seal == TAMPERED or (seal == UNSIGNED and chain in sealed):
                return _broken(report, rid, f"row {rid} (chain {chain}): its seal (MAC) "
                               + ("does not match its content" if seal == TAMPERED else "was removed")
                               + ": changed by someone who can write the store but holds no seal key")
            if seal != UNSIGNED:
                sealed.add(chain)
            else:
                report.unsealed += 1
        expected_prev = last.get(chain, GENESIS)
        report.rows += 1
        if prev_hash != expected_prev:
            what = (
                "a row before it was deleted or changed" if chain in last else "its chain does not start here"
            )
            return _broken(report, rid, f"row {rid} (chain {chain}): previous hash does not match ({what})")
        if row_hash != _hash(prev_hash, canonical(values)):
            return _broken(
                report, rid, f"row {rid} (chain {chain}): contents do not match its hash (row altered)"
            )
        last[chain] = row_hash
        counts[chain] = n = counts.get(chain, 0) + 1
        mark = marks.get(chain)
        if mark is not None and n in mark and mark[n][0] != row_hash:
            return _broken(
                report, rid, f"row {rid} (chain {chain}): the chain's hash after {n} rows is not the one "
                f"anchored ({mark[n][1]}): rows up to it were changed and the chain recomputed, or an older "
                "copy of the file restored"
            )
    report.counts = counts
    for chain, (head_hash, head_rows) in heads.items():
        if last.get(chain, GENESIS) != head_hash or counts.get(chain, 0) != head_rows:
            report.problem = (
                f"chain {chain}: {head_rows} rows were written but {counts.get(chain, 0)} are "
                "there; rows at its end were deleted or the head was changed"
            )
            return report
    for chain, mark in marks.items():
        most = max(mark, default=0)
        if counts.get(chain, 0) < most:
            report.problem = (
                f"chain {chain}: {counts.get(chain, 0)} rows are there but {most} were anchored "
                f"({mark[most][1]}): rows at its end were cut (and the head rewound), the chain removed, "
                "or an older copy of the file restored"
            )
            return report
    extra = set(last) - set(heads)
    if extra:
        report.problem = f"chain(s) {', '.join(sorted(extra))} have rows but no head (head deleted)"
    report.chains = len(last)
    return report


def _broken(report: ChainReport, rid: int, problem: str) -> ChainReport:
    report.broken_row, report.problem = rid, problem
    return report


def verify_file(path: Path, marks: Marks | None = None, key: bytes | None = None) -> ChainReport:
    """One file's chains (and, with ``key``, every row's seal: an embedded store with
    ``sentinel.cluster.seal_key`` set is checked as a server store is; a file from before the ``mac`` column
    reads as unsigned rows)."""
    from sentinel_mcp.storage.snapshot import read_connection

    if not path.exists():
        return ChainReport(problem=f"no audit log at {path}")
    try:
        with read_connection(path) as conn:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "audit_head" not in tables:
                return ChainReport(problem=f"{path} has no chained audit log")
            heads = {c: (h, n) for c, h, n in conn.execute("SELECT chain, hash, rows FROM audit_head")}
            sealed = ""
            if key is not None:
                columns = {r[1] for r in conn.execute("PRAGMA table_info(audit)")}
                sealed = ", mac" if "mac" in columns else ", NULL"
            rows = conn.execute(
                f"SELECT id, {', '.join(HASHED)}, prev_hash, hash{sealed} FROM audit ORDER BY id")
            return verify_rows(rows, heads, marks, key)
    except (sqlite3.Error, TypeError, ValueError, UnicodeError) as e:
        # a damaged file, or a value of a type the log never writes: the log is not intact, say where
        return ChainReport(problem=f"{path} is unreadable as an audit log ({type(e).__name__}: {e})")


def verify_store(path: Path, key: bytes | None = None) -> ChainReport:
    """Every file of the store at ``path`` (the file itself and each instance's, ``audit.audit_files``):
    the totals, or the first file with a problem. ``key``: every row's seal checked too."""
    from sentinel_mcp.gateway.audit import audit_files

    files = audit_files(path)
    if not files:
        return ChainReport(problem=f"no audit log at {path} (nor in {path.parent / 'instances'})", files=0)
    total = ChainReport(files=len(files))
    for file in files:
        report = verify_file(file, key=key)
        if not report.ok:
            report.file, report.files = file, len(files)
            return report
        total.rows += report.rows
        total.chains += report.chains
        total.unsealed += report.unsealed
    return total
