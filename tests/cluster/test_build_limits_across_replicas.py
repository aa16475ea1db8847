"""A principal's build limits hold across replicas on one PostgreSQL: one unfinished build per principal in
the cluster (not one per replica's slot), and ``max_builds_per_hour`` counted and claimed in one transaction,
so submits racing on replicas never overshoot it (``SwarmStore.create_task``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from sentinel_mcp.swarm.build_service import BuildService
from sentinel_mcp.swarm.settings import SwarmSettings
from sentinel_mcp.swarm.state import SwarmStore
from sentinel_mcp.swarm.task_lock import BuildBusyError, BuildQuotaError
from tests.cluster.lease_worker import LEASE, RENEW, SPEC, SilentModel, swarm_key


def _service(root: Path, url: str, replica: str, **settings: int) -> BuildService:
    return BuildService(
        root, SwarmSettings(**settings), store=url, replica=replica, lease_seconds=LEASE, renew_every=RENEW,
        key=swarm_key(),
    )


async def _silent() -> SilentModel:
    return SilentModel()


async def _replicas(tmp_path: Path, url: str, n: int, **settings: int) -> list[BuildService]:
    out = [_service(tmp_path / f"r{i}", url, f"replica-{i}", **settings) for i in range(n)]
    for s in out:
        await s.start(sweep=False)
    return out


async def _unfinished(url: str, principal: str) -> list[str]:
    store = await SwarmStore(url, key=swarm_key()).open()
    try:
        rows = await store.db.query(
            "SELECT task_id FROM tasks WHERE principal = ? AND state NOT IN ('COMPLETED','FAILED')",
            (principal,),
        )
        return [r[0] for r in rows]
    finally:
        await store.close()


async def test_one_principal_cannot_hold_every_replicas_build_slot(pg_url: str, tmp_path: Path) -> None:
    a, b, c = await _replicas(tmp_path, pg_url, 3)
    try:
        await a.submit(SPEC, _silent, principal="alice")
        for other in (b, c):  # another replica's slot is free, but alice already has her build
            with pytest.raises(BuildBusyError):
                await other.submit(SPEC, _silent, principal="alice")
        assert len(await _unfinished(pg_url, "alice")) == 1
        await b.submit(SPEC, _silent, principal="bob")  # bob is not held back by alice's build
    finally:
        for s in (a, b, c):
            await s.close()


async def test_submits_racing_on_replicas_start_one_build_of_a_principal(pg_url: str, tmp_path: Path) -> None:
    services = await _replicas(tmp_path, pg_url, 3)
    try:
        results = await asyncio.gather(
            *(s.submit(SPEC, _silent, principal="alice") for s in services), return_exceptions=True
        )
        started = [r for r in results if isinstance(r, str)]
        refused = [r for r in results if isinstance(r, BuildBusyError)]
        assert len(started) == 1 and len(refused) == 2, results
        assert await _unfinished(pg_url, "alice") == started
    finally:
        for s in services:
            await s.close()


async def test_the_hourly_quota_holds_when_submits_race_on_replicas(pg_url: str, tmp_path: Path) -> None:
    services = await _replicas(tmp_path, pg_url, 3, max_builds_per_hour=2)
    try:
        first = await services[0].submit(SPEC, _silent, principal="alice")
        await services[0].cancel(first)  # ended: it no longer holds alice's slot, but it counts
        results = await asyncio.gather(
            *(s.submit(SPEC, _silent, principal="alice") for s in services), return_exceptions=True
        )
        started = [r for r in results if isinstance(r, str)]
        assert len(started) == 1, results
        assert all(isinstance(r, (BuildBusyError, BuildQuotaError)) for r in results if r not in started)
        for s in services:
            if started[0] in s._running:
                await s.cancel(started[0])
        for s in services:  # two builds within the hour: a third is refused on every replica
            with pytest.raises(BuildQuotaError):
                await s.submit(SPEC, _silent, principal="alice")
        store = await SwarmStore(pg_url, key=swarm_key()).open()
        rows = await store.db.query("SELECT count(*) FROM tasks WHERE principal = 'alice'")
        await store.close()
        assert rows[0][0] == 2
    finally:
        for s in services:
            await s.close()


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_a_build_cancelled_before_its_runner_started_ends_and_frees_its_slots(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Cancelled right after it was submitted (``swarm_cancel``, a lost lease, the gateway closing): its row
    ends FAILED and the replica's slot and the principal's are free again, instead of a build "running"
    forever that no sweeper ends (its lease was given up) and a lock held until the process exits."""
    url = request.getfixturevalue("pg_url") if backend == "postgres" else None
    service = (
        _service(tmp_path / "r", url, "replica-a")
        if url
        else BuildService(tmp_path / "r", SwarmSettings())
    )
    await service.start(sweep=False)
    try:
        first = await service.submit(SPEC, _silent, principal="alice")
        assert await service.cancel(first)  # before the event loop ever ran its runner
        status = await service.status(first)
        assert status["state"] == "FAILED" and status["error"] == "cancelled", status
        second = await service.submit(SPEC, _silent, principal="alice")
        assert (await service.status(second))["state"] not in ("COMPLETED", "FAILED")
    finally:
        await service.close()


async def test_a_store_from_before_keeps_one_unfinished_build_per_principal(
    pg_url: str, tmp_path: Path
) -> None:
    """A store written before the limit (a principal held several replicas' slots) is migrated: the newest
    unfinished build of each principal is kept, the others end FAILED with the reason."""
    store = await SwarmStore(pg_url, key=swarm_key()).open()
    await store.db.write("DROP INDEX tasks_one_unfinished")
    ids = ["t20261202-080000-00000a", "t20261202-080001-00000b", "t20261202-080002-00000c"]
    for tid in ids:
        await store.db.write(
            "INSERT INTO tasks (task_id, state, spec_json, principal, workspace, created_at, updated_at) "
            "VALUES (?, 'EXECUTING', '{}', 'alice', ?, 1, 1)",
            (tid, str(tmp_path / tid)),
        )
    await store.db.write("UPDATE storage_schema SET version = 1 WHERE store = 'swarm'")
    await store.close()
    store = await SwarmStore(pg_url, key=swarm_key()).open()
    try:
        assert await _unfinished(pg_url, "alice") == [ids[-1]]
        for tid in ids[:-1]:  # read in SQL: rows from before signing are shown to nobody (build_rows.py)
            ((state, error),) = await store.db.query("SELECT state, error FROM tasks WHERE task_id = ?",
                                                     (tid,))
            assert state == "FAILED" and "one unfinished build per caller" in error
            assert await store.get_task(tid) is None
        assert not await store.create_task("t20261202-080003-00000d", SPEC, tmp_path / "d", principal="alice",
                                           lease=("r", "r/x", 30.0))
    finally:
        await store.close()


async def test_a_build_of_a_dead_replica_does_not_hold_its_principal_past_its_lease(
    pg_url: str, tmp_path: Path
) -> None:
    """The replica running alice's build died: once its lease lapsed, her next submit on another replica ends
    it (FAILED, the reason named) and starts hers, without waiting for a sweep."""
    store = await SwarmStore(pg_url, key=swarm_key()).open()
    dead = "t20261202-090000-0000d1"
    assert await store.create_task(dead, SPEC, tmp_path / dead, principal="alice",
                                   lease=("replica-dead", "replica-dead/x", 600.0))
    await store.close()
    b = _service(tmp_path / "b", pg_url, "replica-b")
    b.renew_every = 3600  # no sweep comes round during the test: the submit itself must see the lapse
    await b.start(sweep=False)
    try:
        # after start, the lease lapses as time passing makes it lapse (signed as its holder signed it; set
        # back in SQL alone it is a forged lapse, whose end and reason go unsigned)
        from sentinel_mcp.swarm.build_rows import lease_mac

        await b.store.db.write("UPDATE tasks SET lease_until = 0, lease_mac = ? WHERE task_id = ?",
                               (lease_mac(b.store.key, dead, "replica-dead", "replica-dead/x", 0.0), dead))
        started = await b.submit(SPEC, _silent, principal="alice")
        assert (await b.status(dead))["error"].startswith("interrupted: replica replica-dead stopped")
        assert await _unfinished(pg_url, "alice") == [started]
    finally:
        await b.close()
