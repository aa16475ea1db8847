"""More roads out of least privilege for a compromised serving gateway (real PostgreSQL 15), each tried
through the serving role's own connection after ``db grants``: switching triggers off, the server's files and
programs, large objects, other roles' rights, re-granting what it holds."""

from __future__ import annotations

import psycopg
import pytest

from tests.cluster.split_roles import Split, serving

pytestmark = pytest.mark.timeout(300)

REFUSED = [
    "SET session_replication_role = replica",  # replica: no trigger fires (the chain's, the schema guard)
    "SELECT pg_catalog.set_config('session_replication_role', 'replica', false)",
    "ALTER ROLE CURRENT_USER SET session_replication_role = replica",
    "COPY consents FROM PROGRAM 'id'",
    "COPY (SELECT 1) TO PROGRAM 'id'",
    "COPY consents FROM '/etc/passwd'",
    "COPY audit TO '/tmp/sentinel-audit-copy'",
    "SELECT pg_catalog.pg_read_file('/etc/passwd')",
    "SELECT pg_catalog.pg_ls_dir('.')",
    "SELECT pg_catalog.lo_import('/etc/passwd')",
    "CREATE EXTENSION pgcrypto",  # a trusted extension: CREATE on the database is what it needs
    "CREATE PUBLICATION planted FOR TABLE audit",
    "ALTER TABLE audit OWNER TO CURRENT_USER",
    "CREATE TEMP TABLE consents (x int)",
    "CREATE ROLE planted",
    "ALTER ROLE CURRENT_USER BYPASSRLS",
    "SET ROLE pg_database_owner",
]


def test_the_serving_role_is_refused_each_road(split: Split) -> None:
    split.migrate_and_grant()
    allowed = []
    with serving(split) as conn:
        for statement in REFUSED:
            try:
                conn.execute(statement)
            except (psycopg.errors.InsufficientPrivilege, psycopg.errors.UndefinedObject):
                continue
            allowed.append(statement)
    assert allowed == []


def test_another_roles_large_object_is_not_the_serving_roles(split: Split) -> None:
    split.migrate_and_grant()
    with psycopg.connect(split.url(split.owner), autocommit=True) as conn:
        oid = conn.execute("SELECT pg_catalog.lo_from_bytea(0, 'kept'::bytea)").fetchone()[0]
    with serving(split) as conn:
        for statement in ("SELECT pg_catalog.lo_get(%s)", "SELECT pg_catalog.lo_put(%s, 0, 'x'::bytea)",
                          "SELECT pg_catalog.lo_unlink(%s)"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(statement, (oid,))


def test_the_serving_role_cannot_pass_on_what_it_holds(split: Split) -> None:
    """GRANT by a holder without the grant option is a warning, not an error: what counts is that nothing
    was granted."""
    split.migrate_and_grant()
    with serving(split) as conn:
        for statement in ("GRANT SELECT, INSERT ON audit TO PUBLIC", "GRANT DELETE ON consents TO PUBLIC"):
            try:
                conn.execute(statement)
            except psycopg.errors.InsufficientPrivilege:
                pass
    with psycopg.connect(split.url("postgres")) as conn:
        held = conn.execute(
            "SELECT pg_catalog.has_table_privilege('public', 'audit', 'SELECT') "
            "OR pg_catalog.has_table_privilege('public', 'consents', 'DELETE')").fetchone()
    assert held == (False,)
