"""The audit log read back: the newest calls of every log of a store (each gateway instance's file, or the
one a gateway holds open, read through its writer), each call's rows merged into one and each row's seal
checked. Written by ``audit.py``; this side only reads."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from sentinel_mcp.gateway.audit_schema import HASHED
from sentinel_mcp.gateway.audit_seal import SIGNED, verdict
from sentinel_mcp.storage import StorageError


_COLUMNS = ["id", *HASHED, "prev_hash", "hash", "mac"]


def _where(session: str | None, principal: str | None) -> tuple[str, list[str]]:
    conds = [(c, v) for c, v in (("session = ?", session), ("principal = ?", principal)) if v]
    where = ("WHERE " + " AND ".join(c for c, _ in conds)) if conds else ""
    return where, [v for _, v in conds]


async def read_open(
    db: Any, tail: int, session: str | None, principal: str | None = None, key: bytes | None = None
) -> list[dict[str, Any]]:
    """The newest ``tail`` calls of the store ``db`` (open in this process: read through its writer)."""
    where, params = _where(session, principal)
    rows = await db.query(
        f"SELECT {', '.join(_COLUMNS)} FROM audit {where} ORDER BY id DESC LIMIT ?", [*params, tail * 2]
    )
    return merge_calls(_COLUMNS, rows, tail, key, principal)


def merge_calls(
    cols: list[str], rows: list[tuple[Any, ...]], tail: int, key: bytes | None = None,
    principal: str | None = None,
) -> list[dict[str, Any]]:
    """Newest-first rows -> one dict per call (its latest event wins, the decision row's proof kept), oldest
    first. With ``key`` each row's seal is checked first (``audit_seal.py``, its verdict in ``seal``): a row
    that is not signed is nobody's (its principal None, never merged with the call it names, and left out of
    ``principal``'s rows)."""
    calls: dict[Any, dict[str, Any]] = {}
    for raw in rows:
        r = dict(zip(cols, raw))
        if key is not None:
            r["seal"] = verdict(key, r)
            if r["seal"] != SIGNED:
                if principal:
                    continue
                r["principal"] = None
                calls[("unvouched", r["id"])] = r  # its own entry: it must not stand for a real call's rows
                continue
        for k in ("arguments", "proof"):
            if r.get(k):
                try:
                    r[k] = json.loads(r[k])
                except (json.JSONDecodeError, TypeError):
                    pass
        seen = calls.get(r["decision_id"])
        if seen is None:
            calls[r["decision_id"]] = r
        elif seen.get("proof") is None and r.get("proof") is not None:
            seen["proof"] = r["proof"]
    out = sorted(calls.values(), key=lambda r: r["id"])
    return out[-tail:]


def audit_files(path: Path) -> list[Path]:
    """Every file that holds audit records for the store at ``path``: the file itself (a log from before
    instances, or one a test wrote there) and each gateway instance's own log
    (``<dir>/instances/<id>/<name>``, ``storage/instances.py``), live or not, oldest instance first."""
    from sentinel_mcp.storage.instances import instance_dirs

    path = Path(path)
    files = [path] if path.exists() else []
    files += [d / path.name for d in instance_dirs(path.parent) if (d / path.name).exists()]
    return files


async def read_audit(
    path: Path, tail: int = 20, session: str | None = None, principal: str | None = None,
    unreadable: list[str] | None = None, key: bytes | None = None,
) -> list[dict[str, Any]]:
    """The newest ``tail`` calls of every gateway that recorded into the store at ``path`` (all instances,
    merged by time), oldest first (for ``sentinel-mcp audit``; works while gateways run); ``principal``:
    only the calls made for them. A log that cannot be read raises ``StorageError``, or, given
    ``unreadable``, is said there and the others are read: never a shorter log that looks whole. ``key``:
    the audit's seal key (``audit_key``), each row's seal checked (``merge_calls``)."""
    from sentinel_mcp.storage.open import find_open

    calls: list[tuple[float, int, int, dict[str, Any]]] = []
    for n, file in enumerate(audit_files(path)):
        db = find_open(file)
        try:
            if db is not None:  # this process holds it: read through the writer, never around it
                rows = await read_open(db, tail, session, principal, key)
            else:
                rows = await asyncio.to_thread(_read_file, file, tail, session, principal, key)
        except StorageError as e:
            if unreadable is None:
                raise
            unreadable.append(str(e))
            continue
        calls += [(r.get("ts") or 0.0, n, r["id"], r) for r in rows]
    calls.sort(key=lambda c: c[:3])
    return [c[3] for c in calls[-tail:]] if tail > 0 else []


def _read_file(
    path: Path, tail: int, session: str | None, principal: str | None = None, key: bytes | None = None
) -> list[dict[str, Any]]:
    import sqlite3

    from sentinel_mcp.storage.snapshot import read_connection

    if not path.exists():
        return []
    with read_connection(path) as conn:
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "audit" not in tables:
                if "audit_head" in tables:  # a chained log without its rows: damaged, not empty
                    raise StorageError(f"audit log {path} cannot be read: its audit table is missing")
                return []
            cur = conn.execute("SELECT * FROM audit LIMIT 0")
            cols = [d[0] for d in cur.description]
            if principal and "principal" not in cols:  # a log from before principals: nobody's calls
                return []
            where, params = _where(session, principal)
            rows = conn.execute(
                f"SELECT * FROM audit {where} ORDER BY id DESC LIMIT ?", [*params, tail * 2]
            ).fetchall()
        except sqlite3.Error as e:  # a damaged page: said, never read as fewer rows
            raise StorageError(f"audit log {path} cannot be read: {e}") from e
    if "decision_id" not in cols:  # an unchained log from an older Sentinel: one row per call
        cols = [*cols, "decision_id"]
        rows = [(*r, f"row{r[0]}") for r in rows]
    return merge_calls(cols, rows, tail, key, principal)
