"""The lean 2025 path (app/lean_session_calls.py) and the SDK's record the same audit rows for the same call:
each case of ``test_lean_session_calls.CASES`` sent on both paths of one session."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import stop_process
from tests.gateway.test_lean_session_calls import (
    CASES,
    base_headers,
    exchange,
    open_session,
    start,
    tool_call,
)

pytestmark = pytest.mark.timeout(180)


def _audit_rows(tmp: Path) -> list[dict[str, Any]]:
    (path,) = (tmp / "state" / "instances").glob("*/sentinel.db")  # the gateway's own file
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    db.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in db.execute("SELECT * FROM audit ORDER BY id")]
    finally:
        db.close()


def _masked_row(row: dict[str, Any]) -> dict[str, Any]:
    """A row less what each call draws (its id, times, hashes) and the row's own place."""
    out = {k: v for k, v in row.items() if k != "id"}
    for key in ("ts", "decision_id", "latency_ms", "timings", "prev_hash", "hash"):
        out[key] = "<drawn>" if row[key] is not None else None
    return out


def test_lean_and_sdk_calls_record_the_same_audit_rows(tmp_path: Path) -> None:
    """Each case, the hostile and refused ones included, called once on the lean path and once on the
    SDK's (one at a time, on one session): the same audit rows, in the same number, column for column (the
    rows of a call share its decision id; the store is read once the gateway has stopped: it holds its file
    locked while it runs)."""
    gw = start(tmp_path)
    try:
        sid = open_session(gw.port)
        for i, (name, arguments) in enumerate(CASES):
            for path, rid in (("lean", 100 + i), ("sdk", 200 + i)):
                answer = exchange(gw.port, tool_call(rid, name, arguments, via_sdk=path == "sdk"),
                                  base_headers(sid=sid))
                assert answer.status == 200 and answer.events()[-1]["id"] == rid
                assert (str(rid) in gw.direct_ids()) == (path == "lean")
    finally:
        stop_process(gw.proc)
    calls: dict[str, list[dict[str, Any]]] = {}
    for row in _audit_rows(tmp_path):
        if row["session"] == sid or row["tool"] is not None:
            calls.setdefault(row["decision_id"], []).append(_masked_row(row))
    groups = list(calls.values())
    assert len(groups) == 2 * len(CASES), [g[0]["tool"] for g in groups]
    assert groups[0::2] == groups[1::2]
