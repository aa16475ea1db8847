"""Sentinel's names never resolve through a schema another database role controls (real PostgreSQL, real
replicas on 127.0.0.1). Sentinel's SQL names its tables and functions unqualified; PostgreSQL's default
search path is ``"$user", public``. Another role of the same database with CREATE on it (an analytics
account, a second application) can create a schema named like Sentinel's role: every connection a replica
opens after (a reconnect after a server restart, a replica started later) found Sentinel's tables there,
its own or planted ones, or created a whole new store there, where that role, owning the schema, reads its
objects' names, drops them (the audit record) and plants what it likes. A role that may create in a schema
of the path can plant a function of a closer argument type than the built-in one, which then runs with
Sentinel's rights (CVE-2018-1058). So the path is checked at a process's first connection and pinned on
every connection after; a path another role controls refuses the store, naming the schema and the role."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Iterator

import psycopg
import pytest

from sentinel_mcp.gateway.call_record import META_KEY
from sentinel_mcp.storage.local_server import LocalServer
from tests.console.console_rig import ALICE, console_config, mcp_client, text
from tests.identity.identity_rig import env_for, http_sentinel

pytestmark = pytest.mark.timeout(240)
KEY = "schema-shadow-test-seal-key-0123456789abcdef"


class Roles:
    """A database owned by Sentinel's own role, and another role (``other``) with CREATE on that database."""

    def __init__(self, server: LocalServer) -> None:
        tag = uuid.uuid4().hex[:8]
        self.sentinel, self.other, self.db = f"sentinel_{tag}", f"analyst_{tag}", f"shared_{tag}"
        self.server = server
        with psycopg.connect(server.url, autocommit=True) as conn:
            conn.execute(f'CREATE ROLE "{self.sentinel}" LOGIN')
            conn.execute(f'CREATE ROLE "{self.other}" LOGIN')
            conn.execute(f'CREATE DATABASE "{self.db}" OWNER "{self.sentinel}"')
            conn.execute(f'GRANT CREATE ON DATABASE "{self.db}" TO "{self.other}"')

    def url(self, role: str) -> str:
        return f"postgresql://{role}@127.0.0.1:{self.server.port}/{self.db}"

    @property
    def admin(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.server.port}/{self.db}"


@pytest.fixture
def roles(pg_server: LocalServer) -> Iterator[Roles]:
    yield Roles(pg_server)


def replica_config(tmp: Path, url: str, name: str) -> Path:
    tmp.mkdir(exist_ok=True)
    cfg = console_config(tmp, hold_when="never")
    body = json.loads(cfg.read_text())
    body["sentinel"].update(store=url, cluster={"replica": name, "seal_key": KEY})
    cfg.write_text(json.dumps(body))
    return cfg


def plant_schema(roles: Roles) -> None:
    """The other role makes a schema named like Sentinel's role (first in ``"$user", public``) and lets
    Sentinel's role use and create in it, as an attacker would."""
    with psycopg.connect(roles.url(roles.other), autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{roles.sentinel}"')
        conn.execute(f'GRANT USAGE, CREATE ON SCHEMA "{roles.sentinel}" TO "{roles.sentinel}"')


def in_schema(roles: Roles, schema: str) -> list[str]:
    with psycopg.connect(roles.admin) as conn:
        rows = conn.execute("SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                            "WHERE n.nspname = %s ORDER BY 1", (schema,)).fetchall()
    return [r[0] for r in rows]


def public_decisions(roles: Roles) -> set[str]:
    with psycopg.connect(roles.admin) as conn:
        return {r[0] for r in conn.execute("SELECT decision_id FROM public.audit").fetchall()}


def end_sessions(roles: Roles) -> None:
    """Every session of Sentinel's role ended by the server (as a restart would): the replica reconnects."""
    with psycopg.connect(roles.admin, autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s",
                     (roles.sentinel,))


def refused_at_start(cfg: Path) -> str:
    """A replica started on ``cfg``: it must exit refusing (its stderr returned); one that serves fails."""
    proc = subprocess.Popen([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http",
                             "127.0.0.1:0"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env=env_for(cfg))
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        pytest.fail("the replica started and served on a search path another role controls:\n" + err[-3000:])
    assert proc.returncode != 0, err[-3000:]
    return err


async def call_echo(base: str) -> str:
    async with mcp_client(base, ALICE) as alice:
        word = f"echo-{uuid.uuid4().hex[:6]}"
        result = await alice.call_tool("tb__echo", {"text": word})
        assert not result.is_error and word in text(result), text(result)
        return str((result.meta or {})[META_KEY])


async def test_a_schema_planted_later_is_never_searched_and_refuses_the_next_replica(
    tmp_path: Path, roles: Roles
) -> None:
    with http_sentinel(replica_config(tmp_path / "a", roles.url(roles.sentinel), "replica-a")) as (base_a, _):
        first = await call_echo(base_a)
        assert first in public_decisions(roles)
        plant_schema(roles)
        end_sessions(roles)  # replica A's next connections are opened after the plant
        second = await call_echo(base_a)
        third = await call_echo(base_a)
        # A goes on in its own tables: nothing of Sentinel's is made or read in the other role's schema
        assert in_schema(roles, roles.sentinel) == []
        assert {first, second, third} <= public_decisions(roles)
        # a replica started now refuses, naming the schema and its owner (not a second, split store)
        err = refused_at_start(replica_config(tmp_path / "b", roles.url(roles.sentinel), "replica-b"))
        assert roles.sentinel in err and roles.other in err and "search path" in err, err[-3000:]
        assert in_schema(roles, roles.sentinel) == []


@pytest.mark.parametrize("grantee", ["other", "PUBLIC"])
async def test_a_schema_another_role_may_create_in_refuses_the_store(
    tmp_path: Path, roles: Roles, grantee: str
) -> None:
    who = "PUBLIC" if grantee == "PUBLIC" else f'"{roles.other}"'
    with psycopg.connect(roles.admin, autocommit=True) as conn:
        conn.execute(f"GRANT CREATE ON SCHEMA public TO {who}")
    err = refused_at_start(replica_config(tmp_path / "a", roles.url(roles.sentinel), "replica-a"))
    assert "public" in err and (roles.other if grantee == "other" else "PUBLIC") in err, err[-3000:]
    assert "REVOKE CREATE ON SCHEMA" in err, err[-3000:]
    assert in_schema(roles, "public") == []  # nothing made in a schema others may plant in


async def test_an_object_another_role_owns_in_the_path_refuses_the_store(
    tmp_path: Path, roles: Roles
) -> None:
    """A function planted while the other role could create in ``public`` (an exact-type overload of a
    built-in Sentinel calls, ``unnest(text[])``), left after CREATE was taken back."""
    with psycopg.connect(roles.admin, autocommit=True) as conn:
        conn.execute(f'GRANT CREATE ON SCHEMA public TO "{roles.other}"')
    with psycopg.connect(roles.url(roles.other), autocommit=True) as conn:
        conn.execute("CREATE FUNCTION public.unnest(a text[]) RETURNS SETOF text LANGUAGE sql "
                     "AS 'SELECT x FROM pg_catalog.unnest(a) x'")
    with psycopg.connect(roles.admin, autocommit=True) as conn:
        conn.execute(f'REVOKE CREATE ON SCHEMA public FROM "{roles.other}"')
    err = refused_at_start(replica_config(tmp_path / "a", roles.url(roles.sentinel), "replica-a"))
    assert "unnest" in err and roles.other in err, err[-3000:]


async def test_sentinels_own_schema_first_in_the_path_is_used(tmp_path: Path, roles: Roles) -> None:
    """The usual hardened setup (a schema owned by Sentinel's role, named like it) works and is where the
    tables go; two replicas share it."""
    with psycopg.connect(roles.url(roles.sentinel), autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{roles.sentinel}"')
    url = roles.url(roles.sentinel)
    with http_sentinel(replica_config(tmp_path / "a", url, "replica-a")) as (base_a, _), \
            http_sentinel(replica_config(tmp_path / "b", url, "replica-b")) as (base_b, _):
        one, two = await call_echo(base_a), await call_echo(base_b)
    assert "audit" in in_schema(roles, roles.sentinel) and in_schema(roles, "public") == []
    with psycopg.connect(roles.admin) as conn:
        got = {r[0] for r in conn.execute(f'SELECT decision_id FROM "{roles.sentinel}".audit').fetchall()}
    assert {one, two} <= got
