"""PostgreSQL turned read-only under a real replica (``sentinel-mcp serve --http``), as a failed-over standby
or a full disk's emergency setting would: guarded calls are refused with a clear reason and never reach the
upstream, ``/healthz`` is ``degraded`` naming the cause, and once the server takes writes again the replica
serves by itself (no restart), every answered call with its record."""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path

import psycopg
import pytest

from examples.cluster.recipe import Cluster, wait_ok
from tests.cluster.test_outage_under_load import calls
from tests.cluster.test_replicas import base_config
from tests.records.rig import AUTH, executed

pytestmark = pytest.mark.timeout(240)


def health(port: int) -> dict:
    import urllib.error
    import urllib.request

    req = urllib.request.Request(f"http://127.0.0.1:{port}/healthz", headers=AUTH)
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        return json.loads(e.read())


def read_only(url: str, on: bool) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        if on:
            conn.execute("ALTER SYSTEM SET default_transaction_read_only = on")
        else:
            conn.execute("SET default_transaction_read_only = off")
            conn.execute("ALTER SYSTEM RESET default_transaction_read_only")
        conn.execute("SELECT pg_reload_conf()")


async def test_a_read_only_server_refuses_calls_says_so_and_recovers_by_itself() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-read-only-"))
    cluster = Cluster(tmp, base_config(tmp))  # its own PostgreSQL: this test changes its settings
    try:
        url = await asyncio.to_thread(cluster.start_database)
        port = cluster.start_replica("replica-a")
        await asyncio.to_thread(wait_ok, port, 60.0, cluster.procs["replica-a"], AUTH)
        assert not any(refused for _, refused, _, _ in await calls(port, ["before"]))

        await asyncio.to_thread(read_only, url, True)
        await asyncio.sleep(0.5)  # the reload reaches every session at its next statement
        down = await calls(port, [f"ro-{i}" for i in range(4)])
        assert all(refused for _, refused, _, _ in down), down
        assert all("could not record" in t or "cannot write its records" in t for _, _, t, _ in down), down
        assert not {m for m, *_ in down} & set(executed(tmp))  # never forwarded
        status = health(port)
        assert status["status"] == "degraded" and "read-only" in json.dumps(status), status

        await asyncio.to_thread(read_only, url, False)
        deadline = time.monotonic() + 30
        while health(port)["status"] != "ok":  # back by itself
            assert time.monotonic() < deadline, health(port)
            await asyncio.sleep(0.2)
        after = await calls(port, [f"after-{i}" for i in range(3)])
        assert not any(refused for _, refused, _, _ in after), after
        with psycopg.connect(url) as conn:
            finished = {d for (d,) in conn.execute("SELECT decision_id FROM audit WHERE event = 'outcome'")}
        assert {d for *_, d in after} <= finished
    finally:
        await asyncio.to_thread(cluster.down)
