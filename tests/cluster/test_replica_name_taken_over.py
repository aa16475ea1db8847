"""A replica whose name's lease another process took while it ran (it renewed nothing for longer than the
lease: frozen, stopped with SIGSTOP, a long pause) stops deciding until it holds its name again: every call is
refused (never forwarded), ``/healthz`` is ``degraded`` naming the name, and once the name is free again the
replica takes it back and serves by itself. Before, it only logged and kept serving under a name another live
process held (one audit chain written from two processes). A real replica, a real PostgreSQL."""

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
from tests.cluster.test_read_only_store import health
from tests.cluster.test_replicas import base_config
from tests.records.rig import AUTH, executed

pytestmark = pytest.mark.timeout(240)


def _leases(url: str, sql: str, *args: object) -> list[tuple]:
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(sql, args)
        return cur.fetchall() if cur.description else []


async def _until(port: int, wanted: str) -> dict:
    deadline = time.monotonic() + 60  # a bound on the wait, not a measure: the renewal runs every 5 s
    while True:
        status = health(port)
        if status["status"] == wanted:
            return status
        assert time.monotonic() < deadline, status
        await asyncio.sleep(0.3)


async def test_a_replica_whose_name_was_taken_stops_deciding_until_it_holds_it_again() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-name-taken-"))
    cluster = Cluster(tmp, base_config(tmp))
    try:
        url = await asyncio.to_thread(cluster.start_database)
        port = cluster.start_replica("replica-a")
        await asyncio.to_thread(wait_ok, port, 60.0, cluster.procs["replica-a"], AUTH)
        assert not any(refused for _, refused, _, _ in await calls(port, ["before"]))
        [(mine,)] = _leases(url, "SELECT instance FROM replica_leases WHERE replica = 'replica-a'")

        # another process holds the name now, as after this one froze past its lease
        _leases(url, "UPDATE replica_leases SET instance = 'another-process', "
                     "lease_until = extract(epoch from clock_timestamp()) + 3600 WHERE replica = 'replica-a'")
        status = await _until(port, "degraded")
        assert "replica-a" in json.dumps(status), status
        down = await calls(port, [f"taken-{i}" for i in range(3)])
        assert all(refused for _, refused, _, _ in down), down
        assert all("replica-a" in text for _, _, text, _ in down), down
        assert not {m for m, *_ in down} & set(executed(tmp))  # never forwarded
        assert cluster.procs["replica-a"].poll() is None
        # still the other's: this replica did not take it back while it was held
        assert _leases(url, "SELECT instance FROM replica_leases") == [("another-process",)]

        # the other gives the name back: this replica takes it again and serves by itself
        _leases(url, "DELETE FROM replica_leases WHERE instance = 'another-process'")
        await _until(port, "ok")
        assert _leases(url, "SELECT instance FROM replica_leases") == [(mine,)]
        after = await calls(port, ["after"])
        assert not any(refused for _, refused, _, _ in after), after
        assert "after" in executed(tmp)
    finally:
        await asyncio.to_thread(cluster.down)
