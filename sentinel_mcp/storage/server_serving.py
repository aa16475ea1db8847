"""Whether this connection's role migrates a server store's schema, or only serves it.

Why: a gateway that runs its own migrations must own the schema, and the role that owns the tables can
UPDATE, DELETE and TRUNCATE the audit record and ALTER any table: a compromised or buggy gateway could rewrite
what the database keeps (the chain and the anchor detect it; a demanding operator wants the database to
refuse). So a deployment may split the roles (``docs/cluster.md``, "Least privilege"): an owner role migrates
(``sentinel-mcp db migrate``), a serving role holds only the grants ``sentinel-mcp db grants`` gives it.

The role is told apart, never configured: a role that owns ``storage_schema`` (or, before it exists, may
create in the schema the path resolves to) migrates as it always did; any other role serves. Once the roles
are split (``db grants`` has run), a role that holds the owner's rights without being the owner (a member of
it, a superuser) is refused: it is a serving role given too much, which would otherwise migrate. A serving
role never sends DDL: a store whose schema is behind this Sentinel refuses to open, naming the migrate step
(it never half-migrates, and never fails on a permission error halfway through a step).
"""

from __future__ import annotations

import zlib
from typing import Any

from sentinel_mcp.storage.database import StorageError

MIGRATE = "sentinel-mcp db migrate --url <the owner role's URL>"

# (exists, may migrate, split, owns it): the owner of the version table (or a member of its role) migrates;
# before the table exists, a role that may create in the schema names resolve to (the one ``search_path.py``
# pinned) does. Split: ``db grants`` has run (its row security on the version table: ``server_grants.py``)
_ROLE = """
SELECT t.oid IS NOT NULL,
       COALESCE(pg_catalog.pg_has_role(c.relowner, 'USAGE'),
                pg_catalog.has_schema_privilege(pg_catalog.current_schema(), 'CREATE')),
       COALESCE(c.relrowsecurity, false),
       COALESCE(c.relowner = (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = current_user), false)
FROM (SELECT pg_catalog.to_regclass('storage_schema') AS oid) t
LEFT JOIN pg_catalog.pg_class c ON c.oid = t.oid"""
_TABLE = "CREATE TABLE IF NOT EXISTS storage_schema (store TEXT PRIMARY KEY, version INTEGER NOT NULL)"
_TABLE_LOCK = zlib.crc32(b"storage_schema")  # (apply_schema's locks are its stores' names)


class SchemaBehind(StorageError):
    """A serving role (one that does not own Sentinel's schema) found a store's schema older than this
    Sentinel's: the owner role must migrate it first. Nothing was changed."""


class OwnersRights(StorageError):
    """A role other than the schema's owner holds its rights (a member, a superuser) on a split database."""


def version_table(conn: Any) -> bool:
    """The table of the stores' versions, made when this role may make it. True: this role migrates.
    ``conn``: in autocommit, its search path pinned."""
    exists, migrates, split, owns = conn.execute(_ROLE).fetchone()
    if migrates and split and not owns:
        # a database split into an owner and serving roles: a role holding the owner's rights without being
        # it (a member of it, a superuser) is a serving role given too much, never a second owner
        raise OwnersRights(
            "this role holds the schema owner's rights without being the owner (a member of the owner role, "
            "or a superuser) on a database whose roles are split (`sentinel-mcp db grants` has run): a "
            "serving role must hold only what serving needs; the owner alone migrates")
    if migrates:
        if not exists:
            # replicas starting at once on a fresh database: IF NOT EXISTS is not safe against itself (the
            # second's catalog insert fails on pg_type's unique index), so the makers take turns
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_TABLE_LOCK,))
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
