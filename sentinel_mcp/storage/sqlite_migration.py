"""A SQLite store's schema brought up to this Sentinel's version, one step per transaction, each step read
again under the write lock (another gateway sharing the file may have run it since)."""

from __future__ import annotations

import sqlite3
from typing import Callable

from sentinel_mcp.storage.schema import Schema
from sentinel_mcp.storage.sql_script import split_statements
from sentinel_mcp.storage.sqlite_schema_guard import BUMP

BACKEND = "sqlite"  # the name of its steps in a ``Schema``


def apply_schema(
    conn: sqlite3.Connection, schema: Schema, declare: Callable[[sqlite3.Connection], None]
) -> None:
    """Run the steps of ``schema`` the file has not had; ``declare``: the store's schema guard declared again
    (``SQLiteDatabase._declare``), after a step another gateway ran and between steps."""
    row = conn.execute("SELECT version FROM storage_schema WHERE store = ?", (schema.store,)).fetchone()
    have = row[0] if row else 0
    steps = schema.steps(BACKEND)
    if have > len(steps):
        raise sqlite3.OperationalError(
            f"store {schema.store!r} has schema version {have}, newer than this "
            f"Sentinel knows ({len(steps)}); upgrade Sentinel"
        )
    for number, step in enumerate(steps[have:], start=have + 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            # read again under the write lock: another gateway sharing the file may have run this step
            # since (two starting at once both read the old version; the second's ALTER then failed)
            now = conn.execute(
                "SELECT version FROM storage_schema WHERE store = ?", (schema.store,)
            ).fetchone()
            if now is not None and now[0] >= number:
                conn.execute("COMMIT")
                declare(conn)
                continue
            if isinstance(step, str):
                for sql in split_statements(step):
                    conn.execute(sql)
            else:
                step(conn)
            conn.execute(
                "INSERT INTO storage_schema (store, version) VALUES (?, ?) ON CONFLICT (store) "
                "DO UPDATE SET version = excluded.version",
                (schema.store, number),
            )
            conn.execute(BUMP)  # a gateway that read the schema before is refused from now on
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:  # SQLite ends it itself on some errors (a full disk): keep the cause
                conn.execute("ROLLBACK")
            raise
        if number < len(steps):
            declare(conn)  # this step moved the counter: the next must not meet our own guard
