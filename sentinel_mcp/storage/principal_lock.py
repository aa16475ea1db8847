"""A principal's own lock on a server store, held for one transaction: exactly that principal's.

A row per principal in a table of the store's own, locked by an upsert that never changes it (``ON CONFLICT
DO UPDATE ... WHERE false`` locks the row it meets and writes nothing): replicas writing for one principal
at once are ordered, and no other principal's write waits. It was an advisory lock keyed by an unkeyed 64-bit
hash of the name (``hashtextextended``): two principals whose names collide waited for each other's writes,
and one colliding with another one-key lock (a migration's) for that
(``tests/cluster/test_exact_principal_locks.py``). The first write of a new principal inserts its row; two
at once are ordered by the primary key (the second waits for the first's insert, then locks its row). One
statement, as the advisory lock was; the table holds one short row per principal that ever wrote.
"""

from __future__ import annotations

import re

from sentinel_mcp.storage.database import Statement

_TABLE = re.compile(r"^[a-z_]+$")


def table_sql(table: str) -> str:
    """The migration step that makes the lock table (PostgreSQL)."""
    assert _TABLE.match(table), table  # a name of ours, never outside input
    return f"CREATE TABLE IF NOT EXISTS {table} (principal TEXT PRIMARY KEY)"


def lock(table: str, principal: str) -> Statement:
    """The statement that takes ``principal``'s lock until the transaction ends (first in its transaction)."""
    assert _TABLE.match(table), table
    return Statement(
        f"INSERT INTO {table} (principal) VALUES (?) ON CONFLICT (principal) DO UPDATE "
        "SET principal = excluded.principal WHERE false",
        (principal,),
    )
