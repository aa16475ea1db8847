"""What a serving role is granted on a server store (``server_serving.py``): what serving needs, nothing more.

Read from the catalog as the owner role sees its schema after ``sentinel-mcp db migrate``, so a table a later
version adds is covered when the script is run again (it first takes back everything it grants, so it
narrows as well as widens):

- the record, append-only (``RECORD``): SELECT and INSERT. No UPDATE, DELETE or TRUNCATE: an audit row, an
  anchor, a consent event, the cluster's key check are written once and never changed by a gateway.
- the chains' heads (``HEADS``): SELECT; INSERT of a chain's first head only (at the genesis, no rows: row
  security). Never UPDATE or DELETE: a head moves only as its row goes into the record, by the record's
  triggers run as the owner (``gateway/audit_schema.py``), so a gateway cannot set a head where it likes.
- ``storage_schema``: SELECT; INSERT and UPDATE of the one row the health probe writes (``$probe``: a
  degraded store's recovery is a durable write), held to that row by row security, so a serving role can
  neither lower nor raise a store's recorded version nor move the migrations' counter.
- every other table (working state: leases, facts, inboxes, builds, consents in force...): SELECT, INSERT,
  UPDATE, DELETE. Never TRUNCATE, REFERENCES or TRIGGER.
- the schema: USAGE only (no CREATE: nothing planted beside Sentinel's names); sequences: USAGE, SELECT.
No DDL anywhere: the role owns nothing, so it can ALTER, DROP or re-grant nothing. It must not be a member of
the owner role either (it would hold the owner's rights and could ``SET ROLE`` to it): refused here.
"""

from __future__ import annotations

from typing import Any

from sentinel_mcp.storage.database import StorageError

RECORD = ("audit", "audit_anchor", "consent_log", "cluster_key")
HEADS = ("audit_head", "audit_anchor_head")
STARTED = "audit_head"  # the head a serving role starts (a new chain's, at the genesis)
GENESIS = "0" * 64  # gateway.audit_schema's (not imported: the storage layer knows no store)
VERSIONS = "storage_schema"
PROBE_ROW = "$probe"  # job_writer.PROBE's row
ROW_SECURITY = (VERSIONS, STARTED)  # tables whose grants hold only with row security on

_TABLES = """
SELECT c.relname, c.relkind FROM pg_catalog.pg_class c
WHERE c.relnamespace = pg_catalog.to_regnamespace(pg_catalog.current_schema())
  AND c.relkind IN ('r', 'p', 'S') AND NOT c.relispartition AND pg_catalog.pg_has_role(c.relowner, 'USAGE')
ORDER BY c.relname"""
# the grantee: exists, is not the owner nor holds its rights, is no superuser and does not bypass row security
_GRANTEE = """
SELECT r.rolname, r.rolsuper OR r.rolbypassrls,
       pg_catalog.pg_has_role(r.oid, (SELECT u.oid FROM pg_catalog.pg_roles u WHERE u.rolname = current_user),
                              'USAGE')
FROM pg_catalog.pg_roles r WHERE r.rolname = %s"""


class UnfitRole(StorageError):
    """The role named to serve would hold more than serving needs (the owner, a member of it, a superuser)."""


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def expected(name: str, kind: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What a serving role holds on the table (``kind`` 'S': sequence) ``name``: its privileges on the whole
    table, and the columns it may UPDATE when only some (``server_privileges.py`` checks it at start)."""
    if kind == "S":
        return ("USAGE", "SELECT"), ()
    if name in RECORD:
        return ("SELECT", "INSERT"), ()
    if name in HEADS:
        return ("SELECT", "INSERT") if name == STARTED else ("SELECT",), ()
    if name == VERSIONS:
        return ("SELECT", "INSERT"), ("version",)
    return ("SELECT", "INSERT", "UPDATE", "DELETE"), ()


def grant_script(conn: Any, role: str) -> list[str]:
    """The statements that give ``role`` what serving needs on the schema ``conn``'s names resolve to
    (``conn``: the owner role's, its search path pinned)."""
    row = conn.execute(_GRANTEE, (role,)).fetchone()
    if row is None:
        raise UnfitRole(f"no role {role!r} in this server: CREATE ROLE it (LOGIN, no other rights) first")
    if row[1] or row[2]:
        raise UnfitRole(
            f"role {role!r} is a superuser, bypasses row security or holds the owner role's rights: a "
            f"serving role must be a plain role, not a member of the owner")
    schema, db = conn.execute("SELECT pg_catalog.current_schema(), pg_catalog.current_database()").fetchone()
    found = conn.execute(_TABLES).fetchall()
    if not any(name == VERSIONS for name, _ in found):
        raise StorageError("no Sentinel schema here yet: run `sentinel-mcp db migrate` first")
    who, where, database = _ident(role), _ident(schema), _ident(db)
    out = [
        f"REVOKE ALL ON ALL TABLES IN SCHEMA {where} FROM {who}",
        f"REVOKE ALL ON ALL SEQUENCES IN SCHEMA {where} FROM {who}",
        f"REVOKE CREATE ON SCHEMA {where} FROM {who}",
        # no temporary tables or functions: nothing of its own in ``pg_temp``, the pinned path's last schema
        # (PUBLIC holds TEMPORARY on a new database: taken from it too; the database is Sentinel's)
        f"REVOKE CREATE, TEMPORARY ON DATABASE {database} FROM {who}",
        f"REVOKE TEMPORARY ON DATABASE {database} FROM PUBLIC",
        f"GRANT USAGE ON SCHEMA {where} TO {who}",
    ]
    for name, kind in found:
        table = f"{where}.{_ident(name)}"
        privileges, columns = expected(name, kind)
        what = ", ".join(privileges)
        if columns:
            what += ", UPDATE (" + ", ".join(_ident(c) for c in columns) + ")"
        out.append(f"GRANT {what} ON {'SEQUENCE ' if kind == 'S' else ''}{table} TO {who}")
        if name == VERSIONS:  # the health probe's row only
            probe = f"(store = '{PROBE_ROW}')"
            out += _row_security(table, {"sentinel_probe_add": f"FOR INSERT WITH CHECK {probe}",
                                         "sentinel_probe": f"FOR UPDATE USING {probe} WITH CHECK {probe}"})
        elif name == STARTED:  # a new chain's head, at the genesis: the owner's triggers move it
            out += _row_security(table, {
                "sentinel_start": f"FOR INSERT WITH CHECK (hash = '{GENESIS}' AND rows = 0)"})
    return out


def _row_security(table: str, policies: dict[str, str]) -> list[str]:
    """Row security on ``table`` (its owner, the migrations, not held): every row readable, written only as
    ``policies`` let."""
    out = [f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY",
           f"DROP POLICY IF EXISTS sentinel_read ON {table}",
           f"CREATE POLICY sentinel_read ON {table} FOR SELECT USING (true)"]
    for name, rule in policies.items():
        out += [f"DROP POLICY IF EXISTS {name} ON {table}", f"CREATE POLICY {name} ON {table} {rule}"]
    return out


def apply_grants(conn: Any, statements: list[str]) -> None:
    """All of them or none (``conn``: in autocommit)."""
    with conn.transaction():
        for st in statements:
            conn.execute(st)
