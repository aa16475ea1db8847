"""The audit log's schema, per backend. Rows are append-only and chained: each carries the hash of the
previous row of its chain (one chain per writer, so several gateways can share one server database)."""

from __future__ import annotations

import sqlite3

from typing import cast

from sentinel_mcp.storage import Schema
from sentinel_mcp.storage.schema import Migration

GENESIS = "0" * 64

# the columns a row's hash covers, in this order (``audit.canonical``; ``principal`` last: a row without one is
# hashed as rows were before the column existed)
HASHED = ("chain", "ts", "decision_id", "event", "session", "client", "origin", "tool", "upstream", "arg_digest",
          "arguments", "decision", "reason", "proof", "policy_version", "latency_ms", "outcome", "error",
          "principal")

_TABLES = """
CREATE TABLE audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    chain TEXT NOT NULL,
    ts REAL NOT NULL,
    decision_id TEXT NOT NULL,
    event TEXT NOT NULL,            -- decision (before forwarding) | outcome (after) | final (refused: both)
    session TEXT NOT NULL,
    client TEXT,
    origin TEXT NOT NULL,
    tool TEXT NOT NULL,
    upstream TEXT,
    arg_digest TEXT,
    arguments TEXT,
    decision TEXT NOT NULL,
    reason TEXT,
    proof TEXT,
    policy_version TEXT,
    latency_ms REAL,
    outcome TEXT NOT NULL,
    error TEXT,
    principal TEXT,                 -- who the call ran for
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE INDEX audit_ts ON audit(ts);
CREATE INDEX audit_session ON audit(session);
CREATE INDEX audit_decision ON audit(decision_id);
CREATE TABLE audit_head (
    chain TEXT PRIMARY KEY,
    hash TEXT NOT NULL,
    rows INTEGER NOT NULL
)
"""


def _keep_unchained_rows(conn: sqlite3.Connection) -> None:
    """Stores from before the write-ahead log kept an unchained ``audit`` table: keep it aside, start a chain."""
    cols = {r[1] for r in conn.execute("PRAGMA table_info(audit)")}
    if cols and "hash" not in cols:
        conn.execute("ALTER TABLE audit RENAME TO audit_unchained")
        for index in ("audit_ts", "audit_session"):
            conn.execute(f"DROP INDEX IF EXISTS {index}")
    for sql in _TABLES.split(";"):
        if sql.strip():
            conn.execute(sql)


def _add_principal(conn: sqlite3.Connection) -> None:
    """Chained logs from before principals: the column is added (their rows keep verifying, see ``HASHED``)."""
    if "principal" not in {r[1] for r in conn.execute("PRAGMA table_info(audit)")}:
        conn.execute("ALTER TABLE audit ADD COLUMN principal TEXT")


SCHEMA = Schema("audit", {"sqlite": [cast(Migration, _keep_unchained_rows), cast(Migration, _add_principal)]})
