"""A store's migrations on a PostgreSQL server: applied once, whichever replica gets there first."""

from __future__ import annotations

import zlib
from typing import Any

from sentinel_mcp.storage.database import StorageError
from sentinel_mcp.storage.schema import Schema

BACKEND = "postgres"


def apply_schema(conn: Any, schema: Schema) -> None:
    """Migrations of one store, once, whichever replica gets there first (an advisory lock serialises
    them). ``conn``: in autocommit (the migration is its own transaction)."""
    steps = schema.steps(BACKEND)
    with conn.transaction():
        # a migration (an index on a big table) may take long
        conn.execute("SET LOCAL statement_timeout = 0")
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (zlib.crc32(schema.store.encode()),))
        row = conn.execute(
            "SELECT version FROM storage_schema WHERE store = %s", (schema.store,)
        ).fetchone()
        have = row[0] if row else 0
        if have > len(steps):
            raise StorageError(
                f"store {schema.store!r} has schema version {have}, newer than this Sentinel "
                f"knows ({len(steps)}); upgrade Sentinel"
            )
        for number, step in enumerate(steps[have:], start=have + 1):
            if isinstance(step, str):
                conn.execute(step)  # no parameters: the script's text is sent as it is
            else:
                step(conn)
            conn.execute(
                "INSERT INTO storage_schema (store, version) VALUES (%s, %s) ON CONFLICT (store) "
                "DO UPDATE SET version = excluded.version",
                (schema.store, number),
            )
