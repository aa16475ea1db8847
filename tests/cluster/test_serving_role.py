"""A PostgreSQL store under least privilege (real server, real gateways on 127.0.0.1). An owner role (the
database's owner) migrates (``sentinel-mcp db migrate``); a serving role gets only what serving needs
(``sentinel-mcp db grants ROLE --apply``) and runs the gateways. Before, the gateway's role had to own the
schema (it ran the migrations at every start), so the process that serves calls could UPDATE, DELETE or
TRUNCATE the audit record, lower the recorded schema versions and ALTER every table; a role granted less
could not start at all (its first statement was DDL)."""

from __future__ import annotations

import ast
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psycopg
import pytest

from sentinel_mcp.app.server_stores import SERVER_STORES
from sentinel_mcp.policy.fact_store import Fact, FactStore
from sentinel_mcp.storage.local_server import LocalServer
from tests.cluster.split_roles import Split, serving
from tests.cluster.test_schema_shadowing import call_echo, refused_at_start, replica_config
from tests.identity.identity_rig import env_for, http_sentinel

pytestmark = pytest.mark.timeout(300)
ROOT = Path(__file__).resolve().parents[2]


async def test_a_serving_role_refuses_a_store_never_migrated_naming_the_step(
    tmp_path: Path, split: Split
) -> None:
    err = refused_at_start(replica_config(tmp_path / "a", split.url(split.server), "replica-a"))
    assert "sentinel-mcp db migrate" in err, err[-3000:]
    assert split.tables() == []  # nothing made, nothing half-made


async def test_a_serving_role_without_its_grants_refuses_naming_them(tmp_path: Path, split: Split) -> None:
    assert split.db_cli("migrate").returncode == 0
    err = refused_at_start(replica_config(tmp_path / "a", split.url(split.server), "replica-a"))
    assert "sentinel-mcp db grants" in err, err[-3000:]


async def test_a_serving_role_refuses_a_schema_behind_and_sends_no_ddl(tmp_path: Path, split: Split) -> None:
    split.migrate_and_grant()
    with psycopg.connect(split.url(split.owner), autocommit=True) as conn:  # as an older Sentinel left it
        conn.execute("ALTER TABLE consents DROP COLUMN mac")
        conn.execute("UPDATE storage_schema SET version = 1 WHERE store = 'consents'")
    before = split.versions()
    err = refused_at_start(replica_config(tmp_path / "a", split.url(split.server), "replica-a"))
    assert "'consents'" in err and "sentinel-mcp db migrate" in err, err[-3000:]
    assert split.versions() == before
    # the owner's migrate brings it forward; the serving gateway then starts
    assert split.db_cli("migrate").returncode == 0
    with http_sentinel(replica_config(tmp_path / "b", split.url(split.server), "replica-b")) as (base, _):
        await call_echo(base)


async def test_a_serving_role_serves_end_to_end(tmp_path: Path, split: Split) -> None:
    split.migrate_and_grant(process=True)  # the CLI's own processes, once
    cfg = replica_config(tmp_path / "a", split.url(split.server), "replica-a")
    with http_sentinel(cfg) as (base, _):
        first, second = await call_echo(base), await call_echo(base)
        for argv in (["grant", "alice", "contacts"], ["revoke", "alice", "contacts"]):
            done = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "consent", *argv],
                                  capture_output=True, text=True, timeout=120, env=env_for(cfg))
            assert done.returncode == 0, done.stderr[-3000:]
    with psycopg.connect(split.url(split.owner)) as conn:
        audited = {r[0] for r in conn.execute("SELECT decision_id FROM audit").fetchall()}
        events = [r[0] for r in conn.execute("SELECT action FROM consent_log ORDER BY at").fetchall()]
        owners = {r[0] for r in conn.execute(
            "SELECT DISTINCT pg_get_userbyid(relowner) FROM pg_class "
            "WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'S')").fetchall()}
    assert {first, second} <= audited
    assert len(events) == 2
    assert owners == {split.owner}  # the gateway made nothing of its own
    verify = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "audit", "verify"],
                            capture_output=True, text=True, timeout=120, env=env_for(cfg))
    assert verify.returncode == 0, verify.stdout[-2000:] + verify.stderr[-2000:]


async def test_a_serving_role_keeps_facts(split: Split) -> None:
    """The fact store's whole life through the serving role: added, bound, deleted, purged (its sequence)."""
    split.migrate_and_grant()
    fact = Fact(session="s", predicate="owns", args=["u1", "R-1"], fact="owns(u1,'R-1')",
                provenance="observed", expires_at=time.time() + 60)
    store = await FactStore(split.url(split.server)).open()
    try:
        await store.add([fact, Fact(**{**fact.__dict__, "session": "gone", "expires_at": time.time() - 1})])
        await store.bind_context("focus", "res", "R-3")
        assert await store.version("s") > 0 and await store.contexts("focus") == {"res": "R-3"}
        await store.delete("s", ["owns(u1,'R-1')"])
        assert await store.purge_expired() == 1  # the expired fact; the emptied session's counter with it
        assert await store.version("s") == 0 and await store.version("gone") == 0
    finally:
        await store.close()


REFUSED = [
    "UPDATE audit SET tool = 'nothing'",
    "DELETE FROM audit",
    "TRUNCATE audit",
    "TRUNCATE audit_head",
    "DELETE FROM audit_head",
    "UPDATE audit_head SET chain = 'x'",
    "DELETE FROM audit_anchor",
    "UPDATE consent_log SET principal = 'mallory'",
    "DELETE FROM consent_log",
    "TRUNCATE consents",
    "DELETE FROM storage_schema",
    "ALTER TABLE audit ADD COLUMN planted TEXT",
    "ALTER TABLE consents DISABLE TRIGGER ALL",
    "DROP TRIGGER sentinel_schema_guard ON audit",
    "CREATE TABLE public.planted (x int)",
    "CREATE FUNCTION public.unnest(a text[]) RETURNS SETOF text LANGUAGE sql AS 'SELECT 1::text'",
    "CREATE SCHEMA planted",
]


def test_the_serving_role_may_not_rewrite_the_record_nor_change_the_schema(split: Split) -> None:
    split.migrate_and_grant()
    allowed = []
    with serving(split) as conn:
        for statement in REFUSED:
            # the shadowing attack too: a schema named like the role, first in the default path
            statement = statement.replace("SCHEMA planted", f'SCHEMA "{split.server}"')
            try:
                conn.execute(statement)
            except psycopg.errors.InsufficientPrivilege:
                continue
            allowed.append(statement)
    assert allowed == []


def test_the_serving_role_cannot_become_the_owner_nor_move_a_version(split: Split) -> None:
    split.migrate_and_grant()
    before = split.versions()
    with serving(split) as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(f'SET ROLE "{split.owner}"')
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(f'SET SESSION AUTHORIZATION "{split.owner}"')
        # row security: another store's row is not the serving role's to change (lowered, raised, counter)
        assert conn.execute("UPDATE storage_schema SET version = 1 WHERE store = 'audit'").rowcount == 0
        assert conn.execute("UPDATE storage_schema SET version = 99 WHERE store <> '$probe'").rowcount == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("INSERT INTO storage_schema VALUES ('audit', 0) ON CONFLICT (store) DO UPDATE "
                         "SET version = 0")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("UPDATE storage_schema SET store = 'audit' WHERE store = '$probe'")
        # the health probe's own row is what it may write
        conn.execute("INSERT INTO storage_schema (store, version) VALUES ('$probe', 0) ON CONFLICT (store) "
                     "DO UPDATE SET version = storage_schema.version + 1")
    after = split.versions()
    after.pop("$probe")
    assert after == before


def test_the_serving_role_cannot_read_another_deployment(split: Split, pg_server: LocalServer) -> None:
    split.migrate_and_grant()
    other = f"other_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(split.url("postgres"), autocommit=True) as conn:
        conn.execute(f'CREATE ROLE "{other}" LOGIN')
        conn.execute(f'CREATE SCHEMA "{other}" AUTHORIZATION "{other}"')
        conn.execute(f'CREATE TABLE "{other}".audit (secret text)')
        conn.execute(f'ALTER TABLE "{other}".audit OWNER TO "{other}"')
    with serving(split) as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(f'SELECT * FROM "{other}".audit')


def test_grants_refuse_a_role_holding_the_owners_rights(split: Split) -> None:
    assert split.db_cli("migrate").returncode == 0
    with psycopg.connect(split.url("postgres"), autocommit=True) as conn:
        conn.execute(f'GRANT "{split.owner}" TO "{split.server}"')
    done = split.db_cli("grants", split.server)
    assert done.returncode != 0 and "member of the owner" in done.stderr, done.stderr[-2000:]


def test_the_migrate_step_knows_every_server_store() -> None:
    """Every module-level ``Schema`` with a PostgreSQL migration list is migrated by ``db migrate`` (one left
    out would refuse the serving gateways: its schema behind forever)."""
    found = set()
    for root in ("sentinel_mcp", "device_tools"):
        for path in (ROOT / root).rglob("*.py"):
            source = path.read_text()
            if "Schema(" not in source or '"postgres"' not in source:
                continue
            for node in ast.parse(source).body:
                if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                        and getattr(node.value.func, "id", "") == "Schema"
                        and '"postgres"' in ast.get_source_segment(source, node.value)):
                    module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
                    found |= {(module, t.id) for t in node.targets if isinstance(t, ast.Name)}
    assert found and found == set(SERVER_STORES)
