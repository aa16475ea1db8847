"""Where Sentinel's names resolve on a PostgreSQL server: the schemas of the search path as the process's
first connection to a database finds them, checked, then pinned on every connection it opens after.

Sentinel's SQL names its tables and functions unqualified, so PostgreSQL resolves them through the session's
``search_path`` (by default ``"$user", public``). A schema named like Sentinel's role, made later by any role
with CREATE on the database, comes first: every connection opened after it (a reconnect, a pool's new one, a
replica started later) found Sentinel's tables there (planted ones) or made a whole new store there, which
that role, owning the schema, can drop or plant in (``tests/cluster/test_schema_shadowing.py``: a replica's
reconnect made 79 tables there). And a role that may create in a schema of the path can plant a function
of a closer argument type than the built-in one, which then runs with Sentinel's rights (CVE-2018-1058).

So at the first connection: every schema of the path that exists must be owned by a role Sentinel's role
trusts (itself or a role it is a member of, a superuser, the database's owner), no other role (nor PUBLIC)
may create in it, and everything in it must be owned by such a role; else the store is refused, naming the
schema, the role and the fix. The schemas so checked are then set as the path of every connection, with
``pg_temp`` last (the implicit ``pg_catalog`` stays first), so a schema made afterwards is never searched.
And every new connection checks the pinned schemas again: one of them made another role's to shape after
the first connection (``GRANT CREATE ON SCHEMA public TO ...``, an object planted and given away) refuses the
store from the next connection on, as it would have at start. A connection is opened rarely (a pool's new
one, a reconnect): the check is one catalog query on it, beside the connection's own set-up.
"""

from __future__ import annotations

import threading
from typing import Any

from sentinel_mcp.core.display_text import compose, safe_text
from sentinel_mcp.storage.database import StorageError

_FOUND: dict[str, tuple[str, list[str]]] = {}  # dsn -> the pinned path and its schemas (checked)
_LOCK = threading.Lock()
_SHOWN = 8  # problems named in a refusal

# roles the connected role trusts with its names: itself and the roles it is a member of, superusers (who
# can do anything anyway), the database's owner (its administrator; ``pg_database_owner`` is that role)
_TRUSTED = """
SELECT r.oid FROM pg_catalog.pg_roles r
WHERE r.rolsuper OR pg_catalog.pg_has_role(r.oid, 'MEMBER') OR r.rolname = 'pg_database_owner'
   OR r.oid = (SELECT d.datdba FROM pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database())
"""
_PATH = """
SELECT n.oid, n.nspname, n.nspowner, n.nspacl FROM pg_catalog.pg_namespace n
WHERE n.nspname = ANY(%s::pg_catalog.name[])
"""
# (what, schema, role, object): each thing in the path another role controls
_PROBLEMS = f"""
WITH trusted AS ({_TRUSTED}), path AS ({_PATH})
SELECT 'owner', p.nspname, pg_catalog.pg_get_userbyid(p.nspowner), '' FROM path p
 WHERE p.nspowner NOT IN (SELECT oid FROM trusted)
UNION ALL
SELECT 'create', p.nspname,
       CASE a.grantee WHEN 0 THEN 'PUBLIC' ELSE pg_catalog.pg_get_userbyid(a.grantee) END, ''
  FROM path p, pg_catalog.aclexplode(COALESCE(p.nspacl, pg_catalog.acldefault('n', p.nspowner))) a
 WHERE a.privilege_type = 'CREATE' AND a.grantee NOT IN (SELECT oid FROM trusted)
UNION ALL
SELECT 'object', p.nspname, pg_catalog.pg_get_userbyid(c.relowner), c.relname::text
  FROM path p JOIN pg_catalog.pg_class c ON c.relnamespace = p.oid
 WHERE c.relowner NOT IN (SELECT oid FROM trusted)
UNION ALL
SELECT 'object', p.nspname, pg_catalog.pg_get_userbyid(f.proowner), f.oid::regprocedure::text
  FROM path p JOIN pg_catalog.pg_proc f ON f.pronamespace = p.oid
 WHERE f.proowner NOT IN (SELECT oid FROM trusted)
UNION ALL
SELECT 'object', p.nspname, pg_catalog.pg_get_userbyid(o.oprowner), o.oid::regoperator::text
  FROM path p JOIN pg_catalog.pg_operator o ON o.oprnamespace = p.oid
 WHERE o.oprowner NOT IN (SELECT oid FROM trusted)
UNION ALL
SELECT 'object', p.nspname, pg_catalog.pg_get_userbyid(t.typowner), t.typname::text
  FROM path p JOIN pg_catalog.pg_type t ON t.typnamespace = p.oid
 WHERE t.typowner NOT IN (SELECT oid FROM trusted)
LIMIT {_SHOWN + 1}
"""
_SCHEMAS = "SELECT pg_catalog.current_schemas(false)"  # the path's schemas that exist, in order
_SET = "SELECT pg_catalog.set_config('search_path', %s, false)"


class UntrustedSearchPath(StorageError):
    """A schema of the store's search path is another role's to shape (its owner, a role that may create in
    it, an object in it): Sentinel's names could resolve to that role's objects. The store is refused."""


def pin(conn: Any, dsn: str) -> None:
    """Set the checked search path on ``conn`` (a new psycopg connection, before anything else runs on it);
    its schemas found at the first connection of this process to ``dsn``, and checked on every one. Raises
    ``UntrustedSearchPath``, or the driver's error (the connection's fault)."""
    found = _FOUND.get(dsn)
    if found is None:
        schemas = list(conn.execute(_SCHEMAS).fetchone()[0] or [])
        _check(conn, schemas)
        if not schemas:
            raise UntrustedSearchPath(
                "the store's search path names no schema that exists: set one for Sentinel's role "
                "(ALTER ROLE ... SET search_path = <its schema>)")
        path = ", ".join('"' + str(name).replace('"', '""') + '"' for name in schemas) + ", pg_temp"
        with _LOCK:
            found = _FOUND.setdefault(dsn, (path, schemas))
    else:
        _check(conn, found[1])
    conn.execute(_SET, (found[0],))
    if not conn.autocommit:
        conn.commit()


def _check(conn: Any, schemas: list[str]) -> None:
    # the check itself resolves nothing through those schemas (a planted ``unnest(text[])`` would answer it)
    conn.execute(_SET, ("pg_catalog",))
    problems = conn.execute(_PROBLEMS, (schemas,)).fetchall()
    if not conn.autocommit:
        conn.commit()
    if problems:
        raise UntrustedSearchPath(_refusal(problems))


def _refusal(problems: list[tuple[str, str, str, str]]) -> str:
    said: list[str] = []
    for what, schema, role, name in problems[:_SHOWN]:
        if said:
            said.append("; ")
        if what == "owner":
            said.append(compose("schema ", safe_text(schema, 80), " is owned by role ", safe_text(role, 80)))
        elif what == "create":
            said.append(compose("role ", safe_text(role, 80), " may create in schema ",
                                safe_text(schema, 80)))
        else:
            said.append(compose(safe_text(name, 120), " in schema ", safe_text(schema, 80),
                                " is owned by role ", safe_text(role, 80)))
    more = " (and more)" if len(problems) > _SHOWN else ""
    return compose(
        "the store's search path is not Sentinel's own: ", *said, more,
        ". Another role could shadow Sentinel's tables or functions there. Give Sentinel a schema only its "
        "role owns and creates in (REVOKE CREATE ON SCHEMA <schema> FROM PUBLIC, and from other roles; a "
        "schema named like another role's in the path dropped or renamed; or ALTER ROLE <Sentinel's role> "
        "SET search_path = <its schema>)")
