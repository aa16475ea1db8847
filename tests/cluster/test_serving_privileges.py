"""A serving role's effective privileges checked at start (real PostgreSQL 15): exactly what ``sentinel-mcp db
grants`` gives, else the start is refused naming the table and the privilege. Before, the start read the
schema's versions only: a role given more than serving needs (UPDATE on the audit, TRUNCATE, CREATE on the
schema, membership in the owner role or ``pg_execute_server_program``, BYPASSRLS, a superuser) started and
served, and a table a migrate added without the grants run again failed only when first written."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from sentinel_mcp.app.server_stores import refuse_behind
from sentinel_mcp.storage.database import StorageError
from tests.cluster.test_schema_shadowing import refused_at_start, replica_config
from tests.cluster.split_roles import Split

pytestmark = pytest.mark.timeout(300)

# (who runs it: the administrator, the owner or the serving role itself; the statement; what the refusal
# names). {s}: the serving role, {o}: the owner, {d}: the database
TOO_MUCH = [
    ("owner", "GRANT UPDATE ON audit TO {s}", "table audit: UPDATE held"),
    ("owner", "GRANT DELETE ON audit TO {s}", "table audit: DELETE held"),
    ("owner", "GRANT TRUNCATE ON consents TO {s}", "table consents: TRUNCATE held"),
    ("owner", "GRANT UPDATE ON consent_log TO PUBLIC", "table consent_log: UPDATE held"),
    ("owner", "GRANT UPDATE (hash) ON audit TO {s}", "table audit: UPDATE (hash) held"),
    ("owner", "GRANT UPDATE (chain) ON audit_head TO {s}", "table audit_head: UPDATE (chain) held"),
    ("owner", "GRANT REFERENCES (chain) ON audit_head TO {s}", "table audit_head: REFERENCES (chain) held"),
    ("owner", "GRANT TRIGGER ON facts TO {s}", "table facts: TRIGGER held"),
    ("owner", "GRANT UPDATE ON storage_schema TO {s}", "table storage_schema: UPDATE held"),
    ("owner", "GRANT UPDATE ON SEQUENCE audit_id_seq TO {s}", "sequence audit_id_seq: UPDATE held"),
    ("owner", "GRANT CREATE ON SCHEMA public TO {s}", "schema public: CREATE or USAGE WITH GRANT"),
    ("owner", "GRANT USAGE ON SCHEMA public TO {s} WITH GRANT OPTION", "schema public: CREATE or USAGE WITH"),
    ("owner", "GRANT SELECT ON audit TO {s} WITH GRANT OPTION", "table audit: SELECT WITH GRANT OPTION held"),
    ("owner", "GRANT UPDATE (version) ON storage_schema TO {s} WITH GRANT OPTION",
     "table storage_schema: UPDATE WITH GRANT OPTION (version) held"),
    ("owner", "GRANT USAGE ON SEQUENCE audit_id_seq TO {s} WITH GRANT OPTION",
     "sequence audit_id_seq: USAGE WITH GRANT OPTION held"),
    ("owner", "GRANT TEMPORARY ON DATABASE {d} TO {s}", "the database: TEMPORARY held"),
    ("owner", "GRANT CREATE ON DATABASE {d} TO {s}", "the database: CREATE held"),
    ("owner", "ALTER TABLE storage_schema DISABLE ROW LEVEL SECURITY",
     "table storage_schema: row security off"),
    ("owner", "ALTER TABLE audit_head DISABLE ROW LEVEL SECURITY", "table audit_head: row security off"),
    ("admin", "GRANT {o} TO {s}", "holds the schema owner's rights without being the owner"),
    ("admin", "GRANT pg_execute_server_program TO {s}", "member of role pg_execute_server_program"),
    ("admin", "GRANT pg_write_all_data TO {s}", "table audit: DELETE held"),
    ("admin", "ALTER ROLE {s} BYPASSRLS", "is BYPASSRLS"),
    ("admin", "ALTER ROLE {s} SUPERUSER", "holds the schema owner's rights without being the owner"),
    ("admin", "ALTER ROLE {s} CREATEROLE", "is CREATEROLE"),
    ("admin", "ALTER DATABASE {d} SET lo_compat_privileges = on", "lo_compat_privileges is on"),
    # a default the serving role sets on itself (open to any role) applies to every later connection
    ("serving", "ALTER ROLE {s} SET default_transaction_read_only = on", "default_transaction_read_only=on"),
    ("serving", "ALTER ROLE {s} IN DATABASE {d} SET search_path = public, pg_temp", "search_path="),
    ("serving", "ALTER ROLE {s} IN DATABASE {d} SET lock_timeout = 1", "lock_timeout=1"),
]


def _run(split: Split, who: str, statement: str) -> None:
    role = {"admin": "postgres", "owner": split.owner, "serving": split.server}[who]
    with psycopg.connect(split.url(role), autocommit=True) as conn:
        conn.execute(statement.format(s=f'"{split.server}"', o=f'"{split.owner}"', d=f'"{split.db}"'))


def _refusal(split: Split) -> str:
    with pytest.raises(StorageError) as caught:
        refuse_behind(split.url(split.server))
    return str(caught.value)


def test_a_serving_role_granted_exactly_what_serving_needs_passes(split: Split) -> None:
    split.migrate_and_grant()
    refuse_behind(split.url(split.server))


@pytest.mark.parametrize(("who", "statement", "named"), TOO_MUCH, ids=[s for _, s, _ in TOO_MUCH])
def test_a_serving_role_holding_more_is_refused_naming_it(
    split: Split, who: str, statement: str, named: str
) -> None:
    split.migrate_and_grant()
    _run(split, who, statement)
    err = _refusal(split)
    assert named in err and "sentinel-mcp db grants" in err, err


def test_an_object_the_serving_role_planted_before_its_grants_were_narrowed_is_refused(split: Split) -> None:
    split.migrate_and_grant()
    _run(split, "owner", "GRANT CREATE ON SCHEMA public TO {s}")
    _run(split, "serving", "CREATE TABLE public.planted (x int)")
    _run(split, "owner", "REVOKE CREATE ON SCHEMA public FROM {s}")
    _run(split, "owner", "GRANT CREATE ON SCHEMA public TO {s}")
    _run(split, "serving", "CREATE FUNCTION public.unnest(a text[]) RETURNS SETOF text LANGUAGE sql "
                           "AS 'SELECT x FROM pg_catalog.unnest(a) x'")
    _run(split, "serving", "CREATE TYPE public.planted_kind AS ENUM ('x')")
    _run(split, "owner", "REVOKE CREATE ON SCHEMA public FROM {s}")
    err = _refusal(split)
    assert "table planted: owned by this role" in err and "public.unnest(text[]): owned" in err, err
    assert "public.planted_kind: owned" in err, err


@pytest.mark.parametrize(("statement", "named"), [
    ("CREATE TABLE newer (x int)", "table newer: INSERT missing"),  # a migrate without the grants again
    ("REVOKE DELETE ON facts FROM {s}", "table facts: DELETE missing"),
    ("REVOKE UPDATE (version) ON storage_schema FROM {s}", "table storage_schema: UPDATE (version) missing"),
    ("REVOKE USAGE ON SEQUENCE audit_id_seq FROM {s}", "sequence audit_id_seq: USAGE missing"),
])
def test_a_serving_role_holding_less_is_refused_at_start_naming_it(
    split: Split, statement: str, named: str
) -> None:
    split.migrate_and_grant()
    _run(split, "owner", statement)
    assert named in _refusal(split)


async def test_the_gateway_refuses_to_start_naming_the_table_and_the_privilege(
    tmp_path: Path, split: Split
) -> None:
    split.migrate_and_grant()
    _run(split, "owner", "GRANT UPDATE, DELETE ON audit TO {s}")
    err = refused_at_start(replica_config(tmp_path / "a", split.url(split.server), "replica-a"))
    assert "table audit: DELETE held" in err and "table audit: UPDATE held" in err, err[-3000:]
