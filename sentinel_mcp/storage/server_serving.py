"""Whether this connection's role migrates a server store's schema, or only serves it.

Why: a gateway that runs its own migrations must own the schema, and the role that owns the tables can
UPDATE, DELETE and TRUNCATE the audit record and ALTER any table: a compromised or buggy gateway could rewrite
what the database keeps (the chain and the anchor detect it; a demanding operator wants the database to
refuse). So a deployment may split the roles (``docs/cluster.md``, "Least privilege"): an owner role migrates
(``sentinel-mcp db migrate``), a serving role holds only the grants ``sentinel-mcp db grants`` gives it.

The role is told apart, never configured: a role that owns ``storage_schema`` (or, before it exists, may
create in the schema the path resolves to) migrates as it always did; any other role serves. A serving role
never sends DDL: a store whose schema is behind this Sentinel refuses to open, naming the migrate step (it
never half-migrates, and never fails on a permission error halfway through a step).
"""

from __future__ import annotations

from typing import Any

from sentinel_mcp.storage.database import StorageError

MIGRATE = "sentinel-mcp db migrate --url <the owner role's URL>"

# (exists, may migrate): the owner of the version table (or a member of its role) migrates; before the table
# exists, a role that may create in the schema names resolve to (the one ``search_path.py`` pinned) does
_ROLE = """
SELECT t.oid IS NOT NULL,
       COALESCE(pg_catalog.pg_has_role(c.relowner, 'USAGE'),
                pg_catalog.has_schema_privilege(pg_catalog.current_schema(), 'CREATE'))
FROM (SELECT pg_catalog.to_regclass('storage_schema') AS oid) t
LEFT JOIN pg_catalog.pg_class c ON c.oid = t.oid"""
_TABLE = "CREATE TABLE IF NOT EXISTS storage_schema (store TEXT PRIMARY KEY, version INTEGER NOT NULL)"


class SchemaBehind(StorageError):
    """A serving role (one that does not own Sentinel's schema) found a store's schema older than this
    Sentinel's: the owner role must migrate it first. Nothing was changed."""


def version_table(conn: Any) -> bool:
    """The table of the stores' versions, made when this role may make it. True: this role migrates.
    ``conn``: in autocommit, its search path pinned."""
    exists, migrates = conn.execute(_ROLE).fetchone()
    if migrates:
        if not exists:
            conn.execute(_TABLE)
        return True
    if not exists:
        raise SchemaBehind(
            f"the store has no Sentinel schema yet and this role may not create one (it serves, it does "
            f"not migrate): run `{MIGRATE}` first")
    return False


def behind(store: str, have: int, want: int) -> SchemaBehind:
    return SchemaBehind(
        f"store {store!r} has schema version {have}, older than this Sentinel's ({want}), and this role "
        f"does not own the schema (it serves, it does not migrate): run `{MIGRATE}` first")
