"""Canary sweep (secret values never leave): the password of a PostgreSQL store URL is in no output when the
server refuses it (a real server asking this role for its password by SCRAM), at the start or while serving,
or cannot be reached: not in the gateway's stderr at debug level, nor in ``/healthz`` (public and the
owner's), ``/metrics``, ``audit``, ``audit --json``, ``config show`` or ``check``. The password is planted
percent-encoded in the URL and from the environment (``${VAR}``). Real gateway process, real PostgreSQL, real
HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import urllib.parse
from collections.abc import Callable
from pathlib import Path

import httpx2
import psycopg
import psycopg.sql
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from tests.gateway.test_observability import get

from sentinel_mcp.storage.local_server import LocalServer
from tests.conftest import free_port
from tests.conftest import stop_process, wait_http

pytestmark = pytest.mark.timeout(240)
TOKEN = "owner-token-for-the-store-sweep-31"
WRONG = "Wr0ng-Store-Pw:9931/x@y"  # a ':', '/' and '@' of its own: percent-encoded in the URL
RIGHT = "Right-Store-Pw/6620@evil.example:5432/%41#?"  # every character a URL gives a meaning to
CANARIES = (WRONG, urllib.parse.quote(WRONG, safe=""), "9931", RIGHT, "6620")


@pytest.fixture
def scram_role(pg_server: LocalServer) -> str:
    """A role the server asks a password of (SCRAM over TCP on 127.0.0.1), with its own database."""
    role = f"canary{free_port()}"
    with psycopg.connect(pg_server.url, autocommit=True) as conn:
        conn.execute(psycopg.sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(psycopg.sql.Identifier(role),
                                                                                psycopg.sql.Literal(RIGHT)))
        conn.execute(f"CREATE DATABASE {role} OWNER {role}")
        hba = Path(conn.execute("SHOW hba_file").fetchone()[0])
        hba.write_text(f"host all {role} 127.0.0.1/32 scram-sha-256\n" + hba.read_text())
        conn.execute("SELECT pg_reload_conf()")
    return role


def _outputs(tmp_path: Path, store: str, env: dict[str, str],
             while_serving: Callable[[str], None] | None = None) -> dict[str, str]:
    cfg = tmp_path / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {}, "sentinel": {
        "data_dir": str(tmp_path / "state"), "store": store, "cluster": {"seal_key": "s" * 32},
        "http": {"token": TOKEN}}}))
    port = free_port()
    log = tmp_path / "stderr.log"
    outputs: dict[str, str] = {}
    with log.open("wb") as err:
        argv = [sys.executable, "-m", "sentinel_mcp", "-v", "-c", str(cfg), "serve", "--http",
                f"127.0.0.1:{port}"]
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err,
                                env={**os.environ, **env}, start_new_session=True)
        try:
            try:
                wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc, timeout=90)
                if while_serving is not None:
                    outputs["healthz before"] = get(f"http://127.0.0.1:{port}/healthz", TOKEN)[2]
                    while_serving(f"http://127.0.0.1:{port}/mcp")
                    for _ in range(40):  # until health says the store is refused (bounded by count)
                        if "authentication" in get(f"http://127.0.0.1:{port}/healthz", TOKEN)[2]:
                            break
                outputs["healthz"] = get(f"http://127.0.0.1:{port}/healthz")[2]
                outputs["healthz (owner)"] = get(f"http://127.0.0.1:{port}/healthz", TOKEN)[2]
                outputs["metrics"] = get(f"http://127.0.0.1:{port}/metrics", TOKEN)[2]
            except RuntimeError as e:  # it refused to start: what it said is in its stderr
                outputs["start"] = str(e)
        finally:
            stop_process(proc)
    outputs["stderr"] = log.read_text(errors="replace")
    for argv in (["audit", "--json"], ["audit"], ["config", "show"], ["check"]):
        done = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-v", "-c", str(cfg), *argv],
                              capture_output=True, text=True, timeout=90, env={**os.environ, **env})
        outputs[" ".join(argv)] = done.stdout + done.stderr
    return outputs


async def _one_call(mcp_url: str) -> None:
    client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)
    async with Client(streamable_http_client(mcp_url, http_client=client)) as c:
        await c.call_tool("nowhere__tool", {"password": "x"})


def _leaks(outputs: dict[str, str]) -> dict[str, list[str]]:
    return {name: [c for c in CANARIES if c in text] for name, text in outputs.items()
            if any(c in text for c in CANARIES)}


@pytest.mark.parametrize("how", ["in the URL", "from the environment"])
def test_a_refused_store_password_is_in_no_output(pg_server: LocalServer, scram_role: str, tmp_path: Path,
                                                  how: str) -> None:
    pw = urllib.parse.quote(WRONG, safe="") if how == "in the URL" else "${STORE_PW}"
    store = f"postgresql://{scram_role}:{pw}@127.0.0.1:{pg_server.port}/{scram_role}"
    outputs = _outputs(tmp_path, store, {"STORE_PW": WRONG})
    assert "password authentication failed" in outputs["stderr"], outputs  # refused by the server, and said
    assert _leaks(outputs) == {}, _leaks(outputs)


@pytest.mark.parametrize("how", ["in the URL", "from the environment"])
def test_an_unreachable_store_password_is_in_no_output(tmp_path: Path, how: str) -> None:
    pw = urllib.parse.quote(WRONG, safe="") if how == "in the URL" else "${STORE_PW}"
    outputs = _outputs(tmp_path, f"postgresql://someone:{pw}@127.0.0.1:{free_port()}/db", {"STORE_PW": WRONG})
    assert "127.0.0.1" in outputs["stderr"], outputs  # the cause was said, naming the server
    assert _leaks(outputs) == {}, _leaks(outputs)


@pytest.mark.parametrize("how", ["in the URL", "from the environment"])
def test_a_password_refused_while_serving_is_in_no_output(pg_server: LocalServer, scram_role: str,
                                                         tmp_path: Path, how: str) -> None:
    """Serving with the right password, then the server changes it and drops the connections: each
    reconnection is refused, and ``/healthz`` says so without the password. (The start-up line printed the
    audit log's location as the setting was written, password and all.)"""
    pw = urllib.parse.quote(RIGHT, safe="") if how == "in the URL" else "${STORE_PW}"
    store = f"postgresql://{scram_role}:{pw}@127.0.0.1:{pg_server.port}/{scram_role}"

    def change_the_password(mcp_url: str) -> None:
        with psycopg.connect(pg_server.url, autocommit=True) as conn:
            conn.execute(psycopg.sql.SQL("ALTER ROLE {} PASSWORD 'another-one-entirely'").format(
                psycopg.sql.Identifier(scram_role)))
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s",
                         (scram_role,))
        asyncio.run(_one_call(mcp_url))  # its record is written to the store: refused now

    outputs = _outputs(tmp_path, store, {"STORE_PW": RIGHT}, change_the_password)
    assert "start" not in outputs, outputs  # it served (the password from the environment was taken)
    assert "authentication" in outputs["healthz (owner)"], outputs["healthz (owner)"]  # refused, and said
    assert _leaks(outputs) == {}, _leaks(outputs)


async def test_a_password_from_the_environment_is_the_password_whatever_it_holds(
        pg_server: LocalServer, scram_role: str) -> None:
    """``${VAR}`` in the URL's password is the variable's value, character for character: it was put in the
    URL as it is, so a password holding '/' or '@' moved the rest of it into the host, the port or the path
    (this one named evil.example as the server, and the part of the password before it went there), and a
    '%' was read as an escape. Now the server checks the very password, and accepts it."""
    from sentinel_mcp.storage.location import server_location
    from sentinel_mcp.storage.open import open_database, release
    from tests.cluster.test_store_backends import KV

    setting = f"postgresql://{scram_role}:${{STORE_PW}}@127.0.0.1:{pg_server.port}/{scram_role}"
    loc = server_location(setting, env={"STORE_PW": RIGHT})
    assert loc.password == RIGHT and urllib.parse.urlsplit(loc.dsn).hostname == "127.0.0.1", loc
    assert RIGHT not in loc.redacted and RIGHT not in loc.scrub(f"error in {loc.dsn}")
    os.environ["STORE_PW"] = RIGHT
    try:
        db = open_database(setting, "kv-env-password")
        try:
            await db.migrate(KV)  # connected: the server took the password
            await db.write("INSERT INTO kv (k, v) VALUES (?, ?)", ("a", 1.0))
        finally:
            await release(db)
    finally:
        del os.environ["STORE_PW"]
