"""A store's migrations on a PostgreSQL server: applied once, whichever replica gets there first; and a
replica whose schema they moved past refused by the server on every write, at once.

Why: several replicas share the database, and upgrading them is not atomic. The first replica of a newer
Sentinel migrates; an older replica's connections, opened before, went on writing the migrated tables as if
nothing had changed (rows without the new column's value, a seal, a chain's step), and reading them. Only the
audit path noticed, because its trigger refuses the old way of writing (``docs/cluster.md``).

How, without a round trip per call: every migration step any replica applies moves a counter of the whole
database, the row ``$epoch`` of ``storage_schema``, in the migration's own transaction. A replica's connection
reads, in one snapshot, the versions of the stores it knows (a newer one refuses it, as at start) and that
counter, and declares the counter in its session (``sentinel.schema_epoch``). Each of Sentinel's tables
carries a statement trigger, ``sentinel_schema_guard``, run inside every INSERT, UPDATE, DELETE and TRUNCATE
before any row is touched: a session that declared a counter older than the database's is refused
(SQLSTATE ``SN001``), whatever the statement. The writer then reconnects once: a replica of the current
version re-reads and goes on (a store opened by another replica for the first time also moves the counter);
an older one is refused at its reconnect, its jobs fail closed and its health says why. Sessions that declare
nothing (an operator's ``psql``, the CLI's own connections) are not checked by it.

The migration also NOTIFYs ``sentinel_schema`` (delivered at its commit): a replica's connections listen, and
one told checks its schema again before its next use (the check above, on that connection: one round trip,
only then; a socket poll otherwise), its reads included: reads have no trigger, so an older replica's read may
still be served in the moment between the migration's commit and the notice's arrival; its writes never are.
Any role that may connect can NOTIFY (no grant needed): a notice is only a reason to check, never to drop a
connection, so a flood of them costs a replica one round trip per use at most, never a reconnect.
"""

from __future__ import annotations

import logging
import zlib
from typing import Any, Callable, ContextManager

from sentinel_mcp.storage.database import StorageError
from sentinel_mcp.storage.schema import Schema
from sentinel_mcp.storage.server_privileges import check_privileges
from sentinel_mcp.storage.server_serving import behind, version_table

log = logging.getLogger(__name__)

BACKEND = "postgres"
EPOCH = "$epoch"  # storage_schema's row counting the migration steps applied to this database
STALE = "SN001"  # the guard's SQLSTATE: this session's schema is older than the database's
CHANNEL = "sentinel_schema"  # what a migration notifies at its commit
_EPOCH_LOCK = zlib.crc32(EPOCH.encode())

# one indexed read of a one-row-per-store table per write statement; sessions that declared nothing pass
_GUARD = """
CREATE OR REPLACE FUNCTION sentinel_schema_guard() RETURNS trigger LANGUAGE plpgsql AS $g$
DECLARE
  seen TEXT := pg_catalog.current_setting('sentinel.schema_epoch', true);
BEGIN
  IF seen IS NULL OR seen = '' THEN
    RETURN NULL;  -- before the read: a role that may not read storage_schema writes as before
  END IF;
  IF seen::bigint < (SELECT version FROM storage_schema WHERE store = '$epoch') THEN
    RAISE EXCEPTION 'the store''s schema was migrated past this replica (a newer Sentinel): refused'
      USING ERRCODE = 'SN001';
  END IF;
  RETURN NULL;
END $g$"""

# Sentinel's tables in the schema its names resolve to (``search_path.py`` pins it) that lack the guard; a
# table of another role's is not ours to change. None: the function is missing too.
_UNGUARDED = """
SELECT pg_catalog.to_regproc('sentinel_schema_guard') IS NOT NULL,
       pg_catalog.array_agg(pg_catalog.quote_ident(c.relname)) FILTER (WHERE NOT EXISTS (
         SELECT 1 FROM pg_catalog.pg_trigger t
         WHERE t.tgrelid = c.oid AND t.tgname = 'sentinel_schema_guard'))
FROM pg_catalog.pg_class c
WHERE c.relnamespace = pg_catalog.to_regnamespace(pg_catalog.current_schema())
  AND c.relkind IN ('r', 'p') AND c.relname <> 'storage_schema' AND NOT c.relispartition
  AND pg_catalog.pg_has_role(c.relowner, 'USAGE')"""

# the versions of the stores this replica knows and the database's counter, in one snapshot; the counter
# declared for this session (session-wide: the connection is in autocommit)
_DECLARE = """
SELECT pg_catalog.set_config('sentinel.schema_epoch',
         COALESCE((SELECT version FROM storage_schema WHERE store = '$epoch'), 0)::text, false),
       (SELECT pg_catalog.array_agg(ARRAY[store, version::text]) FROM storage_schema WHERE store = ANY(%s))"""


class SchemaMoved(StorageError):
    """A store this Sentinel knows has a newer schema in the database (a newer replica migrated it)."""


def apply_schema(conn: Any, schema: Schema, migrates: bool = True) -> int:
    """Migrations of one store, once, whichever replica gets there first (an advisory lock serialises
    them). ``conn``: in autocommit (the migration is its own transaction). How many steps it applied.
    ``migrates`` False (a serving role, ``server_serving.py``): the version only checked, no DDL sent."""
    steps = schema.steps(BACKEND)
    if not migrates:
        row = conn.execute("SELECT version FROM storage_schema WHERE store = %s", (schema.store,)).fetchone()
        have = row[0] if row else 0
        if have > len(steps):
            raise SchemaMoved(
                f"store {schema.store!r} has schema version {have}, newer than this Sentinel "
                f"knows ({len(steps)}); upgrade Sentinel"
            )
        if have < len(steps):
            raise behind(schema.store, have, len(steps))
        return 0
    with conn.transaction():
        # a migration (an index on a big table) may take long
        conn.execute("SET LOCAL statement_timeout = 0")
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (zlib.crc32(schema.store.encode()),))
        row = conn.execute(
            "SELECT version FROM storage_schema WHERE store = %s", (schema.store,)
        ).fetchone()
        have = row[0] if row else 0
        if have > len(steps):
            raise SchemaMoved(
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
        if len(steps) > have:  # moved: every session that declared the counter before is refused from now on
            conn.execute(
                "INSERT INTO storage_schema (store, version) VALUES (%s, 1) ON CONFLICT (store) "
                "DO UPDATE SET version = storage_schema.version + 1",
                (EPOCH,),
            )
            conn.execute(f"NOTIFY {CHANNEL}")
    return max(0, len(steps) - have)


def serving_current(conn: Any, schemas: Callable[[], list[Schema]]) -> None:
    """When ``conn``'s role serves (it does not own the schema, ``server_serving.py``): every store of
    ``schemas()`` at this Sentinel's version, else ``SchemaBehind`` (or ``SchemaMoved``) for the first that is
    not; then its privileges exactly what serving needs, else ``ServingRoleUnfit`` (``server_privileges``).
    Nothing is sent but reads. A role that migrates passes: its stores migrate as they open (and
    ``schemas`` is not called: it imports every store's module)."""
    if version_table(conn):
        return
    for schema in schemas():
        apply_schema(conn, schema, migrates=False)
    check_privileges(conn)


def guard_tables(conn: Any, bounded: Callable[[], ContextManager[None]]) -> None:
    """The guard on every table of Sentinel's that lacks it (after migrations; usually none: one catalog
    read). ``conn``: in autocommit, its statements bounded; ``bounded``: the bound on the installation's
    commit (a synchronous standby that does not answer must not hold the writer: ``commit_wait.py``)."""
    present, missing = conn.execute(_UNGUARDED).fetchone()
    if not missing:
        return
    import psycopg  # the driver: only where a server is named
    try:
        with bounded(), conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_EPOCH_LOCK,))  # replicas installing at once
            if not present:
                conn.execute(_GUARD)
            for table in missing:
                conn.execute(
                    f"CREATE OR REPLACE TRIGGER sentinel_schema_guard BEFORE INSERT OR UPDATE OR DELETE OR "
                    f"TRUNCATE ON {table} FOR EACH STATEMENT EXECUTE FUNCTION sentinel_schema_guard()"
                )
    except psycopg.errors.InsufficientPrivilege as e:
        # a role that may not create in the schema (granted less than its tables' owner): the owner's
        # replicas install the guard; this one's writes are checked wherever it is installed
        log.warning("the schema guard could not be installed: %s", str(e).splitlines()[0] if str(e) else e)


def declare(conn: Any, schemas: list[Schema]) -> None:
    """This session's schema: refused (StorageError) if a store it knows is newer in the database than this
    Sentinel knows; else the database's counter is declared for the guard. ``conn``: in autocommit."""
    known = {s.store: s.version(BACKEND) for s in schemas}
    _, found = conn.execute(_DECLARE, (list(known),)).fetchone()
    for store, version in found or ():
        if int(version) > known[store]:
            raise SchemaMoved(
                f"store {store!r} has schema version {version}, newer than this Sentinel knows "
                f"({known[store]}): a newer replica migrated it; upgrade this one"
            )


def redeclare(conn: Any, schemas: list[Schema]) -> None:
    """``declare`` on a connection between transactions, not in autocommit (a writer's): the declaration is
    the session's, never a transaction's (one rolled back would take it back)."""
    conn.autocommit = True
    try:
        declare(conn, schemas)
    finally:
        if not (conn.closed or conn.broken):
            conn.autocommit = False


def is_stale(e: BaseException) -> bool:
    """The guard's refusal: this session's schema is older than the database's (nothing was written)."""
    return getattr(e, "sqlstate", None) == STALE
