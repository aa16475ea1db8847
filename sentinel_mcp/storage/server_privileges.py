"""A serving role's effective privileges, checked at start against what ``sentinel-mcp db grants`` gives it
(``server_grants.py``): too little and too much both refuse the start, naming the table and the privilege.

Why: the start check read the schema's versions only. A table a migrate added without ``db grants`` run again
failed closed only when first written (a call refused at run time); and a serving role given more than
serving needs (UPDATE or DELETE on the audit, TRUNCATE, CREATE on the schema, TEMP, any privilege WITH
GRANT OPTION, membership in the owner role or in a predefined one such as ``pg_execute_server_program``,
superuser, BYPASSRLS) served as if it were least privilege. What is compared is what PostgreSQL itself
answers (``has_table_privilege`` and its kin: grants to PUBLIC and through roles counted), for every table
and sequence of the schema, every column.

Also refused: a default the role set on itself (``ALTER ROLE ... SET``, open to any role: it would apply to
every connection opened after, e.g. a ``search_path`` or ``default_transaction_read_only``), an object in a
schema of the path the role owns (a table, a function shadowing a built-in, planted before its rights were
narrowed: ``search_path.py`` trusts the role's own objects), row security switched off where the grants
rely on it, and ``lo_compat_privileges`` on (every role could read and write every large object). One
catalog query, once at start; nothing on the call path.
"""

from __future__ import annotations

from typing import Any

from sentinel_mcp.core.display_text import compose, safe_text
from sentinel_mcp.storage.database import StorageError
from sentinel_mcp.storage.server_grants import ROW_SECURITY, expected

GRANTS = "sentinel-mcp db grants <role> --apply, as the owner"
_SHOWN = 8  # problems named in a refusal
_GRANTABLE = " WITH GRANT OPTION"  # never expected: the role could pass what it holds on to any other


def _asked(*privileges: str) -> list[str]:
    return [*privileges, *(p + _GRANTABLE for p in privileges)]


_TABLE_PRIVILEGES = _asked("SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER")
_COLUMN_PRIVILEGES = _asked("SELECT", "INSERT", "UPDATE", "REFERENCES")
_SEQUENCE_PRIVILEGES = _asked("USAGE", "SELECT", "UPDATE")

# per table and sequence of the schema Sentinel's names resolve to: (name, kind, owned by this role, row
# security on, the privileges held on the whole of it, 'PRIVILEGE column' for each privilege held on some
# columns only)
_TABLES = """
SELECT c.relname::text, c.relkind::text, pg_catalog.pg_has_role(c.relowner, 'MEMBER'), c.relrowsecurity,
       CASE WHEN c.relkind = 'S'
         THEN ARRAY(SELECT p FROM pg_catalog.unnest(%(seq)s::text[]) p
                    WHERE pg_catalog.has_sequence_privilege(c.oid, p))
         ELSE ARRAY(SELECT p FROM pg_catalog.unnest(%(tab)s::text[]) p
                    WHERE pg_catalog.has_table_privilege(c.oid, p)) END,
       ARRAY(SELECT p || '|' || a.attname FROM pg_catalog.pg_attribute a, pg_catalog.unnest(%(col)s::text[]) p
             WHERE c.relkind <> 'S' AND a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
               AND NOT pg_catalog.has_table_privilege(c.oid, p)
               AND pg_catalog.has_column_privilege(c.oid, a.attnum, p))
FROM pg_catalog.pg_class c
WHERE c.relnamespace = pg_catalog.to_regnamespace(pg_catalog.current_schema())
  AND c.relkind IN ('r', 'p', 'S') AND NOT c.relispartition
ORDER BY c.relname"""

# (problem, what): everything beyond the tables this role must not hold
_ROLE = """
SELECT 'attribute', a FROM pg_catalog.pg_roles r,
  LATERAL (VALUES ('SUPERUSER', r.rolsuper), ('BYPASSRLS', r.rolbypassrls), ('CREATEROLE', r.rolcreaterole),
                  ('CREATEDB', r.rolcreatedb), ('REPLICATION', r.rolreplication)) v(a, held)
  WHERE r.rolname = current_user AND v.held
UNION ALL
SELECT 'member', g.rolname::text FROM pg_catalog.pg_roles g
  WHERE g.rolname <> current_user AND pg_catalog.pg_has_role(g.oid, 'MEMBER')
UNION ALL
SELECT 'database', p FROM pg_catalog.unnest(ARRAY['CREATE', 'TEMPORARY']) p
  WHERE pg_catalog.has_database_privilege(pg_catalog.current_database(), p)
UNION ALL
SELECT 'schema', s FROM pg_catalog.unnest(pg_catalog.current_schemas(false)) s
  WHERE pg_catalog.has_schema_privilege(s, 'CREATE')
     OR pg_catalog.has_schema_privilege(s, 'USAGE WITH GRANT OPTION')
UNION ALL
SELECT 'setting', x FROM pg_catalog.pg_db_role_setting d, pg_catalog.unnest(d.setconfig) x
  WHERE d.setrole = (SELECT oid FROM pg_catalog.pg_roles WHERE rolname = current_user)
    AND d.setdatabase IN (0, (SELECT oid FROM pg_catalog.pg_database
                              WHERE datname = pg_catalog.current_database()))
UNION ALL
SELECT 'owned', n.nspname || '.' || o.name FROM pg_catalog.pg_namespace n, LATERAL (
    SELECT c.relname::text FROM pg_catalog.pg_class c
     WHERE c.relnamespace = n.oid AND pg_catalog.pg_has_role(c.relowner, 'MEMBER')
       AND n.nspname <> pg_catalog.current_schema()
    UNION ALL SELECT f.oid::pg_catalog.regprocedure::text FROM pg_catalog.pg_proc f
     WHERE f.pronamespace = n.oid AND pg_catalog.pg_has_role(f.proowner, 'MEMBER')
    UNION ALL SELECT x.oid::pg_catalog.regoperator::text FROM pg_catalog.pg_operator x
     WHERE x.oprnamespace = n.oid AND pg_catalog.pg_has_role(x.oprowner, 'MEMBER')
    UNION ALL SELECT t.typname::text FROM pg_catalog.pg_type t
     WHERE t.typnamespace = n.oid AND t.typrelid = 0 AND t.typcategory <> 'A'
       AND pg_catalog.pg_has_role(t.typowner, 'MEMBER')) o(name)
  WHERE n.nspname = ANY(pg_catalog.current_schemas(false))
UNION ALL
SELECT 'large objects', 'lo_compat_privileges' WHERE pg_catalog.current_setting('lo_compat_privileges')::bool
"""


class ServingRoleUnfit(StorageError):
    """A serving role holds less than serving needs, or more: the start is refused, naming what."""


def table_problems(rows: list[tuple[str, str, bool, bool, list[str], list[str]]]) -> list[tuple[str, str]]:
    """('table NAME' or 'sequence NAME', problem) for each whose privileges differ from ``expected``'s."""
    out: list[tuple[str, str]] = []
    for relname, kind, owned, secured, whole, columns in rows:
        name = f"{'sequence' if kind == 'S' else 'table'} {relname}"
        if owned:
            out.append((name, "owned by this role (it could ALTER, DROP or re-grant it)"))
            continue
        privileges, updatable = expected(relname, kind)
        held, want = set(whole), set(privileges)
        out += [(name, f"{p} held, not needed") for p in sorted(held - want)]
        out += [(name, f"{p} missing") for p in sorted(want - held)]
        if kind == "S":
            continue
        for priv in _COLUMN_PRIVILEGES:  # a column's privilege beyond the table's own (UPDATE of some)
            have = {c.split("|", 1)[1] for c in columns if c.split("|", 1)[0] == priv}
            if priv in held:
                continue
            allowed = set(updatable) if priv == "UPDATE" else set()
            out += [(name, f"{priv} ({c}) held, not needed") for c in sorted(have - allowed)]
            out += [(name, f"{priv} ({c}) missing") for c in sorted(allowed - have)]
        if relname in ROW_SECURITY and not secured:
            out.append((name, "row security off (its grants rely on it)"))
    return out


def check_privileges(conn: Any) -> None:
    """``ServingRoleUnfit`` unless ``conn``'s role holds exactly what ``db grants`` gives on the schema its
    names resolve to (pinned), and nothing beyond it. ``conn``: a serving role's, in autocommit."""
    rows = conn.execute(_TABLES, {"seq": _SEQUENCE_PRIVILEGES, "tab": _TABLE_PRIVILEGES,
                                  "col": _COLUMN_PRIVILEGES}).fetchall()
    found = table_problems(rows)
    for what, name in conn.execute(_ROLE).fetchall():
        found.append({
            "attribute": ("the role", f"is {name}"),
            "member": ("the role", f"is a member of role {name} (it holds that role's rights)"),
            "database": ("the database", f"{name} held, not needed"),
            "schema": (f"schema {name}", "CREATE or USAGE WITH GRANT OPTION held (it could plant names "
                                         "beside Sentinel's, or let other roles in)"),
            "owned": (name, "owned by this role (planted in the search path: it shadows what it names)"),
            "setting": ("the role", f"has a default of its own: {name} (ALTER ROLE ... RESET it)"),
            "large objects": ("the server", "lo_compat_privileges is on (any role reads any large object)"),
        }[what])
    if not found:
        return
    said = [compose(safe_text(where, 120), ": ", safe_text(problem, 200))
            for where, problem in found[:_SHOWN]]
    more = f" (and {len(found) - _SHOWN} more)" if len(found) > _SHOWN else ""
    raise ServingRoleUnfit(
        "the serving role's privileges are not what serving needs: " + "; ".join(said) + more
        + f". Give it exactly that: {GRANTS} (and take back what was granted beside it)")
