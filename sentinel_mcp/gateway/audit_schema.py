"""The audit log's schema, per backend. Rows are append-only and chained: each carries the hash of the
previous row of its chain (one chain per writer, so several gateways can share one server database)."""

from __future__ import annotations

import sqlite3

from typing import cast

from sentinel_mcp.storage import Schema
from sentinel_mcp.storage.schema import Migration

GENESIS = "0" * 64

# the columns a row's hash covers, in this order (``audit.canonical``; the columns added later come last, and
# a
# row without them is hashed as rows were before they existed)
HASHED = (
    "chain",
    "ts",
    "decision_id",
    "event",
    "session",
    "client",
    "origin",
    "tool",
    "upstream",
    "arg_digest",
    "arguments",
    "decision",
    "reason",
    "proof",
    "policy_version",
    "latency_ms",
    "outcome",
    "error",
    "principal",
    "timings",
)
OPTIONAL_TAIL = 2  # principal, timings

# ``id`` is the rowid without AUTOINCREMENT (issue 21): AUTOINCREMENT keeps the highest id in
# ``sqlite_sequence``, a table of its own, so every commit wrote one page more to the log (~4.5 -> ~3.5 pages
# a commit of a row alone: ``benchmarks/harness/sequential_commit_io.py``). Without it a row takes the highest
# id + 1: the same ids, in the same order, as long as no row is deleted, and Sentinel deletes none (only after
# the last rows were cut could an id be taken again, and that cut is what the chain's head and the anchor
# report). Files made before keep their AUTOINCREMENT (each gateway starts a file of its own; rebuilding an
# old table is not worth a page).
_TABLES = """
CREATE TABLE audit (
    id INTEGER PRIMARY KEY,
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
    timings TEXT,                   -- JSON: ms in guard / fetch / ask / forward
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
    """Stores from before the write-ahead log kept an unchained ``audit`` table: keep it aside, start a chain.
    """
    cols = {r[1] for r in conn.execute("PRAGMA table_info(audit)")}
    if cols and "hash" not in cols:
        conn.execute("ALTER TABLE audit RENAME TO audit_unchained")
        for index in ("audit_ts", "audit_session"):
            conn.execute(f"DROP INDEX IF EXISTS {index}")
    for sql in _TABLES.split(";"):
        if sql.strip():
            conn.execute(sql)


def _add_principal(conn: sqlite3.Connection) -> None:
    """Chained logs from before principals: the column is added (their rows keep verifying, see ``HASHED``).
    """
    if "principal" not in {r[1] for r in conn.execute("PRAGMA table_info(audit)")}:
        conn.execute("ALTER TABLE audit ADD COLUMN principal TEXT")


def _add_timings(conn: sqlite3.Connection) -> None:
    """Logs from before the latency split: the column is added (their rows keep verifying, see ``HASHED``)."""
    if "timings" not in {r[1] for r in conn.execute("PRAGMA table_info(audit)")}:
        conn.execute("ALTER TABLE audit ADD COLUMN timings TEXT")


# SQLite: the head moves with each row inserted, in the INSERT's own statement (issue 21). A row is inserted
# only if it is chained onto the head (its ``prev_hash`` is the head's hash), and then moves the head to it;
# any other row is skipped (RAISE(IGNORE): not inserted, nothing moved, the statement goes on), so a batch
# chained onto rows that were not committed inserts nothing (its writers count the rows inserted and chain
# again). Before, an ``UPDATE`` of the head went beside every ``INSERT``: with BEGIN and COMMIT, four
# statements a commit, each a hand-over of the interpreter between the writer and the busy event loop; now a
# commit is one statement, in SQLite's own transaction. PostgreSQL does the same (``_PG_HEAD_TRIGGER``). An
# old Sentinel refuses the file (its schema version is newer): no writer moves the head twice.
_HEAD_TRIGGER = """
CREATE TRIGGER audit_advance BEFORE INSERT ON audit BEGIN
    SELECT RAISE(IGNORE) WHERE NOT EXISTS (
        SELECT 1 FROM audit_head WHERE chain = NEW.chain AND hash = NEW.prev_hash);
    UPDATE audit_head SET hash = NEW.hash, rows = rows + 1 WHERE chain = NEW.chain;
END
"""


def _add_mac(conn: sqlite3.Connection) -> None:
    """The rows' seal (``audit_seal.py``): a MAC over the row's hash, outside what the hash covers (rows
    written before it, or without a key, hold NULL)."""
    if "mac" not in {r[1] for r in conn.execute("PRAGMA table_info(audit)")}:
        conn.execute("ALTER TABLE audit ADD COLUMN mac TEXT")


def _head_moves_with_its_rows(conn: sqlite3.Connection) -> None:
    conn.execute("DROP TRIGGER IF EXISTS audit_advance")
    conn.execute(_HEAD_TRIGGER)


def _no_unread_indexes(conn: sqlite3.Connection) -> None:
    """No read of a SQLite log looks rows up by time or by decision id (they are read by ``id`` and session:
    every query plan, ``tests/records/test_one_statement_commits.py``; a writer checks the last row it
    committed by its id, ``AuditLog._keep_what_was_lost``), yet the indexes on ``ts`` and ``decision_id`` cost
    each commit ~1.5 and ~2 of its ~11 pages written to the log under load (issue 21). Rows keep both
    columns; PostgreSQL's stay (its writes were not measured here)."""
    conn.execute("DROP INDEX IF EXISTS audit_ts")
    conn.execute("DROP INDEX IF EXISTS audit_decision")


# PostgreSQL (several replicas on one database): the same rows, each replica writing its own chain (``chain``
# is
# the replica id); ``audit_anchor`` rows commit every chain's head at once (``audit_cluster.py``)
_PG_TABLES = """
CREATE TABLE audit (
    id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    chain TEXT NOT NULL, ts DOUBLE PRECISION NOT NULL, decision_id TEXT NOT NULL, event TEXT NOT NULL,
    session TEXT NOT NULL, client TEXT, origin TEXT NOT NULL, tool TEXT NOT NULL, upstream TEXT, arg_digest TEXT,
    arguments TEXT, decision TEXT NOT NULL, reason TEXT, proof TEXT, policy_version TEXT,
    latency_ms DOUBLE PRECISION, outcome TEXT NOT NULL, error TEXT, principal TEXT, timings TEXT,
    prev_hash TEXT NOT NULL, hash TEXT NOT NULL);
CREATE INDEX audit_ts ON audit(ts);
CREATE INDEX audit_session ON audit(session);
CREATE INDEX audit_decision ON audit(decision_id);
CREATE INDEX audit_chain ON audit(chain, id);
CREATE TABLE audit_head (chain TEXT PRIMARY KEY, hash TEXT NOT NULL, rows BIGINT NOT NULL);
CREATE TABLE audit_anchor (
    id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    ts DOUBLE PRECISION NOT NULL,
    by_chain TEXT NOT NULL,          -- the replica that wrote it
    heads TEXT NOT NULL,             -- JSON {chain: [hash, rows]}: every chain's head at that moment
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL UNIQUE);
CREATE TABLE audit_anchor_head (one INTEGER PRIMARY KEY CHECK (one = 1), hash TEXT NOT NULL, rows BIGINT NOT NULL)
"""  # noqa: E501 (verbatim text)

# PostgreSQL: the same rule as SQLite's trigger (issue 21). Before, a commit of a row alone was four round
# trips (BEGIN, the head's UPDATE, the INSERT, COMMIT); now the INSERT alone, its own transaction
# (``postgres.py`` runs a lone statement in autocommit). The UPDATE takes the head's row lock: a replica
# racing on the same chain waits, then finds the head moved (read committed re-reads the row) and its row is
# skipped (RETURN NULL: not inserted, counted 0), so its writer chains again; one chain whatever the number
# of writers. A statement that fails after the trigger (a NOT NULL column) rolls the head's move back with
# it. A replica of an older Sentinel still running when the trigger is added moves the head to its row's hash
# before its INSERT: that row finds the head already at its own hash and fails (the error undoes the head's
# move with it, the old replica refuses its calls until upgraded, and on reconnecting it refuses the newer
# schema), never a head moved past a row that was skipped.
_PG_HEAD_TRIGGER = """
CREATE OR REPLACE FUNCTION audit_advance() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE audit_head SET hash = NEW.hash, rows = rows + 1 WHERE chain = NEW.chain AND hash = NEW.prev_hash;
    IF FOUND THEN
        RETURN NEW;
    END IF;
    IF EXISTS (SELECT 1 FROM audit_head WHERE chain = NEW.chain AND hash = NEW.hash) THEN
        RAISE EXCEPTION 'audit: the chain head is already at this row (moved by a writer of an older schema)'
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NULL;
END
$$;
DROP TRIGGER IF EXISTS audit_advance ON audit;
CREATE TRIGGER audit_advance BEFORE INSERT ON audit FOR EACH ROW EXECUTE FUNCTION audit_advance()
"""

# PostgreSQL under least privilege (``docs/cluster.md``): a serving role wrote the chains' heads itself
# (UPDATE of ``hash``), so a compromised gateway could set any head (a fork of a chain, a replica's writes
# blocked); the anchor found it only later. Now the heads move only here, as the schema's owner (SECURITY
# DEFINER, its search path the one pinned when migrating): a chain's head from the row's ``prev_hash`` to
# its ``hash`` as the row goes in (``audit_advance``, unchanged), the anchors' head likewise as an anchor
# goes in (it was moved by the anchor's own statement: ``audit_cluster._ANCHOR``). A serving role is granted
# no UPDATE on a head (``storage/server_grants.py``): every move of one leaves its row in the record.
_PG_HEADS_BY_OWNER = (
    _PG_HEAD_TRIGGER.split("DROP TRIGGER")[0].replace(
        "LANGUAGE plpgsql AS", "LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS")
    + f"""
REVOKE ALL ON FUNCTION audit_advance() FROM PUBLIC;
CREATE OR REPLACE FUNCTION audit_anchor_advance() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path FROM CURRENT AS $$
DECLARE
    moved TEXT;
BEGIN
    -- the first anchor starts the anchors' head; one chained to what no head says puts back the genesis
    INSERT INTO audit_anchor_head AS h (one, hash, rows)
        VALUES (1, CASE WHEN NEW.prev_hash = '{GENESIS}' THEN NEW.hash ELSE '{GENESIS}' END,
                CASE WHEN NEW.prev_hash = '{GENESIS}' THEN 1 ELSE 0 END)
        ON CONFLICT (one) DO UPDATE SET hash = NEW.hash, rows = h.rows + 1 WHERE h.hash = NEW.prev_hash
        RETURNING h.hash INTO moved;
    IF moved = NEW.hash THEN
        RETURN NEW;
    END IF;
    RETURN NULL;
END
$$;
REVOKE ALL ON FUNCTION audit_anchor_advance() FROM PUBLIC;
CREATE OR REPLACE TRIGGER audit_anchor_advance BEFORE INSERT ON audit_anchor FOR EACH ROW
    EXECUTE FUNCTION audit_anchor_advance()
""")

SCHEMA = Schema(
    "audit",
    {
        "sqlite": [
            cast(Migration, _keep_unchained_rows),
            cast(Migration, _add_principal),
            cast(Migration, _add_timings),
            cast(Migration, _head_moves_with_its_rows),
            cast(Migration, _no_unread_indexes),
            cast(Migration, _add_mac),
        ],
        "postgres": [_PG_TABLES, _PG_HEAD_TRIGGER, "ALTER TABLE audit ADD COLUMN IF NOT EXISTS mac TEXT",
                     _PG_HEADS_BY_OWNER],
    },
)
