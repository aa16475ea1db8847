"""A gateway whose schema a newer one moved past, on a SQLite file they share: refused by SQLite itself on
every write, inside the statement (``server_schema.py`` closes the same gap for PostgreSQL).

Why: several gateways may share a data dir's stores (one file, a rollback journal). The first gateway of a
newer Sentinel migrates; an older one, open before, went on writing the migrated tables as if nothing had
changed (rows without the new column's value, a seal, a chain's step).

How, at no extra statement a call: every migration step moves a counter of the whole file (the row
``$epoch`` of ``storage_schema``) in the step's own transaction. A gateway's connection reads, in one
transaction, the versions of the stores it knows (a newer one refuses it, as at open) and that counter, and
installs TEMP triggers on its own connection (no other session sees them, nothing is written to the file):
before each INSERT, UPDATE and DELETE of a table of the file, one indexed read of the counter; a counter
that moved past the one read refuses the statement (``RAISE(ABORT)``: nothing of it is written). The writer
then reads the schema again once: a gateway of the current version installs them anew and runs the jobs
again (another gateway only added a store); an older one is refused, its jobs fail closed and its health
says why. A session that installed none (an operator's ``sqlite3`` shell, a gateway of before) is not
checked, as PostgreSQL's guard lets a session that declared nothing through. Reads are not checked (no
trigger runs on them); a store opened by one process alone (``locking_mode=EXCLUSIVE``) needs none.
"""

from __future__ import annotations

import sqlite3

from sentinel_mcp.storage.database import StorageError
from sentinel_mcp.storage.schema import Schema

EPOCH = "$epoch"
# in a migration step's transaction: every connection that read the counter before is refused from now on
BUMP = ("INSERT INTO storage_schema (store, version) VALUES ('$epoch', 1) ON CONFLICT (store) "
        "DO UPDATE SET version = storage_schema.version + 1")
_SAID = "the store's schema was migrated past this gateway (a newer Sentinel): refused"
_SAID_SQL = _SAID.replace("'", "''")
_PREFIX = "sentinel_guard_"
_EVENTS = {"i": "INSERT", "u": "UPDATE", "d": "DELETE"}


class SchemaMoved(StorageError, sqlite3.OperationalError):
    """A store this Sentinel knows has a newer schema in the file (a newer gateway migrated it)."""

    area = "storage"


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def declare(conn: sqlite3.Connection, schemas: list[Schema]) -> None:
    """The guard for this connection's writes at the file's counter as it is now; raises ``SchemaMoved`` if
    a store it knows is newer in the file than this Sentinel knows. Outside a transaction: runs its own."""
    conn.execute("BEGIN")  # one snapshot: the versions, the counter and the tables
    try:
        found = dict(conn.execute("SELECT store, version FROM main.storage_schema").fetchall())
        for schema in schemas:
            steps = len(schema.steps("sqlite"))
            if int(found.get(schema.store, 0)) > steps:
                raise SchemaMoved(
                    f"store {schema.store!r} has schema version {found[schema.store]}, newer than this "
                    f"Sentinel knows ({steps}): a newer gateway migrated it; upgrade this one"
                )
        epoch = int(found.get(EPOCH, 0))
        tables = [name for (name,) in conn.execute(
            "SELECT name FROM main.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "AND name <> 'storage_schema' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%'")]
        shadow = {name for (name,) in conn.execute(
            "SELECT name FROM main.sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'")}
        installed = [name for (name,) in conn.execute(
            "SELECT name FROM temp.sqlite_master WHERE type = 'trigger' AND name LIKE 'sentinel\\_guard\\_%' "
            "ESCAPE '\\'")]
        for name in installed:
            conn.execute(f"DROP TRIGGER temp.{_quoted(name)}")
        for table in tables:
            if any(table.startswith(f"{v}_") for v in shadow):
                continue  # a virtual table's own tables (FTS5's): written through it, as it decides
            for key, event in _EVENTS.items():
                conn.execute(
                    f"CREATE TEMP TRIGGER {_quoted(f'{_PREFIX}{key}_{table}')} BEFORE {event} ON "
                    f"main.{_quoted(table)} WHEN (SELECT version FROM main.storage_schema WHERE store = "
                    f"'{EPOCH}') > {epoch} BEGIN SELECT RAISE(ABORT, '{_SAID_SQL}'); END"
                )
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def is_stale(e: BaseException) -> bool:
    """The guard's refusal: this connection's schema is older than the file's (nothing was written)."""
    return isinstance(e, sqlite3.IntegrityError) and _SAID in str(e)
