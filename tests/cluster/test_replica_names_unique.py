"""Two live replicas under one ``sentinel.cluster.replica`` name: the second refuses to start, naming the
name. Before, both ran (one audit chain written from two processes; each ended the other's builds and tasks
at start as its own). A crashed replica's name is taken again once its lease lapses on the database's clock;
a cleanly stopped one's at once."""

from __future__ import annotations

import os
import signal

import psycopg
import pytest

from examples.cluster.recipe import wait_ok
from sentinel_mcp.gateway.replica_name_lease import ReplicaNameLease
from sentinel_mcp.storage import open_database
from sentinel_mcp.storage.location import LocationError
from sentinel_mcp.storage.open import release
from tests.cluster.test_cluster_key_check import KEY, _config, _refused, _start, _stop

pytestmark = pytest.mark.timeout(240)


def test_a_second_live_replica_under_the_same_name_does_not_start(tmp_path, pg_url) -> None:  # noqa: ANN001
    first, port = _start(_config(tmp_path, pg_url, "replica-a"), KEY)
    try:
        wait_ok(port, proc=first)
        twin = tmp_path / "twin"
        twin.mkdir()
        err = _refused(_config(twin, pg_url, "replica-a"), KEY)
        assert 'sentinel.cluster.replica "replica-a" is held by another live replica' in err, err[-3000:]
        assert "Traceback" not in err, err[-3000:]
        assert first.poll() is None
        # a name of its own starts beside it
        other, port_b = _start(_config(tmp_path, pg_url, "replica-b"), KEY)
        try:
            wait_ok(port_b, proc=other)
        finally:
            _stop(other)
        os.killpg(first.pid, signal.SIGKILL)  # a crash: nothing gives the name back, its lease lapses
        first.communicate()
        again, port_c = _start(_config(tmp_path, pg_url, "replica-a"), KEY)
        try:
            wait_ok(port_c, proc=again, timeout=90)  # waits out the dead one's lease, then serves
        finally:
            _stop(again)
        restarted, port_d = _start(_config(tmp_path, pg_url, "replica-a"), KEY)  # after a clean stop
        try:
            wait_ok(port_d, proc=restarted)
        finally:
            _stop(restarted)
    finally:
        _stop(first)


async def test_the_lease_lapses_on_the_databases_clock(pg_url: str) -> None:
    def probe(name: str = "r") -> ReplicaNameLease:  # gives up after 0.7 s of a current lease
        return ReplicaNameLease(db, name, lease=0.5, renew=0.2)

    db = open_database(pg_url, "test")
    try:
        dead = ReplicaNameLease(db, "r", lease=1000.0, renew=1000.0)
        assert await dead.claim() is None
        with pytest.raises(LocationError, match='"r" is held'):
            await probe().claim()  # the holder's lease (1000 s) is current for the whole wait
        with psycopg.connect(pg_url, autocommit=True) as conn:  # the holder's lease lapsed by the db's clock
            conn.execute("UPDATE replica_leases SET lease_until = EXTRACT(EPOCH FROM clock_timestamp()) - 1")
        live = ReplicaNameLease(db, "r", lease=1000.0, renew=1000.0)
        assert await live.claim() is None
        with pytest.raises(LocationError):
            await probe().claim()
        assert await probe("another").claim() is None
        await dead.give_back()  # the old holder's give-back removes nothing of the new one's
        with pytest.raises(LocationError):
            await probe().claim()
        await live.give_back()
        assert await probe().claim() is None  # given back: free at once
    finally:
        await release(db)
