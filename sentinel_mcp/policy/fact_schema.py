"""The fact store's schema, per backend (one module, one place to change it)."""

import json
from typing import Any

from sentinel_mcp.storage import Schema

SCHEMA_VERSION = 2  # 2: fact_values, the index strict symbolic mode looks arguments up in

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS facts (
    id INTEGER PRIMARY KEY,
    session TEXT NOT NULL,
    predicate TEXT NOT NULL,
    args TEXT NOT NULL,              -- JSON array of the arguments
    fact TEXT NOT NULL,              -- canonical Prolog text (quoted), the identity of the fact
    provenance TEXT NOT NULL CHECK (provenance IN ('observed', 'user', 'agent', 'seed')),
    source_tool TEXT,                -- the call it came from: tool name ...
    source_digest TEXT,              -- ... and argument digest
    contexts TEXT NOT NULL DEFAULT '[]',  -- JSON array of context names it was established through
    established_at REAL NOT NULL,
    expires_at REAL,                 -- NULL: valid for the whole session
    UNIQUE (session, fact)
);
CREATE INDEX IF NOT EXISTS facts_by_session ON facts (session, predicate);
CREATE INDEX IF NOT EXISTS facts_by_expiry ON facts (expires_at);
-- every string argument (at any depth) of a non-internal fact, so strict symbolic mode finds the facts
-- holding a call's argument values without reading the session's facts
CREATE TABLE IF NOT EXISTS fact_values (
    session TEXT NOT NULL,
    value TEXT NOT NULL,
    fact TEXT NOT NULL,
    PRIMARY KEY (session, value, fact)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS fact_values_by_fact ON fact_values (session, fact);
CREATE TABLE IF NOT EXISTS contexts (
    session TEXT NOT NULL,
    name TEXT NOT NULL,
    value TEXT NOT NULL,             -- JSON
    bound_at REAL NOT NULL,
    PRIMARY KEY (session, name)
);
"""


def _create(conn: Any) -> None:
    """Create the tables; a store from before the value index (meta version 1) gets it built once."""
    from sentinel_mcp.policy.fact_store import _value_rows

    for statement in SCHEMA.split(";"):  # not executescript: that would commit the migration's transaction
        if statement.strip():
            conn.execute(statement)
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if row is not None and int(row[0]) < 2:
        conn.execute("DELETE FROM fact_values")
        rows = [r for s, p, a, f in conn.execute("SELECT session, predicate, args, fact FROM facts").fetchall()
                for r in _value_rows(s, p, json.loads(a), f)]
        conn.executemany("INSERT OR IGNORE INTO fact_values (session, value, fact) VALUES (?,?,?)", rows)
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))


STORE_SCHEMA = Schema("facts", {"sqlite": [_create]})
