"""Swarm builds on a shared PostgreSQL are leased: a dead replica's build is ended with the reason (never
resumed, never left "running"), each by exactly one replica (``swarm/build_lease.py``)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from sentinel_mcp.swarm import build_lease
from sentinel_mcp.swarm.build_service import BuildService
from sentinel_mcp.swarm.settings import SwarmSettings
from sentinel_mcp.swarm.state import SwarmStore
from tests.cluster.lease_worker import LEASE, RENEW, SEAL, SPEC, SilentModel, swarm_key

ROOT = Path(__file__).resolve().parents[2]
WORKER = [sys.executable, "-m", "tests.cluster.lease_worker"]
N = 40


def _service(root: Path, url: str, replica: str) -> BuildService:
    return BuildService(
        root, SwarmSettings(), store=url, replica=replica, lease_seconds=LEASE, renew_every=RENEW,
        key=swarm_key(),
    )


async def _until_ended(service: BuildService, task_id: str) -> dict:
    for _ in range(200):  # bounded by count; the lease is 3 s and renewals every 0.3 s
        status = await service.status(task_id)
        if status["state"] in ("COMPLETED", "FAILED"):
            return status
        await asyncio.sleep(0.1)
    raise AssertionError(f"build {task_id} still {status['state']}")


async def test_two_sweepers_end_each_lapsed_build_exactly_once(pg_url: str, tmp_path: Path) -> None:
    store = await SwarmStore(pg_url, key=swarm_key()).open()
    ids = [f"t20261124-0900{i:02d}-{i:06x}" for i in range(N)]
    for i, tid in enumerate(ids):  # a dead replica's builds (one per caller): leases lapsed a second ago
        assert await store.create_task(
            tid, SPEC, tmp_path / tid, principal=f"p{i}", lease=("replica-dead", "replica-dead/x", -1.0)
        )
    live = "t20261124-090099-0000ff"
    await store.create_task(live, SPEC, tmp_path / live, lease=("replica-live", "replica-live/y", 600.0))
    go = tmp_path / "go"
    procs = [
        subprocess.Popen([*WORKER, "sweep", pg_url, str(go)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    go.touch()
    outs = [json.loads(p.communicate(timeout=60)[0]) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    a, b = set(outs[0]), set(outs[1])
    assert len(outs[0]) + len(outs[1]) == N and a | b == set(ids) and not a & b  # each ended exactly once
    for tid in ids:
        task = await store.get_task(tid)
        assert task["state"] == "FAILED" and task["finished_at"] is not None
        assert task["error"].startswith("interrupted: replica replica-dead stopped")
    assert (await store.get_task(live))["state"] == "PLANNING"  # a renewed lease is never taken
    await store.close()


async def test_a_replica_killed_mid_build_leaves_it_ended_with_the_reason(
    pg_url: str, tmp_path: Path
) -> None:
    proc = subprocess.Popen(
        [*WORKER, "build", pg_url, str(tmp_path / "a"), "replica-a"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        task_id = proc.stdout.readline().strip()  # type: ignore[union-attr]
        assert task_id, "the replica did not start its build"
        other = _service(tmp_path / "b", pg_url, "replica-b")
        await other.start(sweep=False)
        for _ in range(3):  # alive and renewing: its build is never taken, whoever looks
            await asyncio.sleep(LEASE / 2)
            status = await other.status(task_id)
            assert status["state"] not in ("COMPLETED", "FAILED"), status
            assert status["replica"] == "replica-a" and not status["running_here"]
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        status = await _until_ended(other, task_id)
        assert status["state"] == "FAILED"
        assert status["error"].startswith("interrupted: replica replica-a stopped"), status["error"]
        assert [t["state"] for t in await other.list() if t["task_id"] == task_id] == ["FAILED"]
        await other.close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


async def test_a_runner_whose_lease_was_ended_elsewhere_stops_and_stays_ended(
    pg_url: str, tmp_path: Path
) -> None:
    a = _service(tmp_path / "a", pg_url, "replica-a")
    b = _service(tmp_path / "b", pg_url, "replica-b")
    await a.start(sweep=False)
    await b.start(sweep=False)

    async def backend() -> SilentModel:
        return SilentModel()

    task_id = await a.submit(SPEC, backend)
    # replica-a could not reach the database for longer than its lease: replica-b ends the build meanwhile.
    # (a's renewal may land between the lapse written here and b's look: then the lease is a's again, as it
    # should be, and the lapse is written once more; on a busy machine that race was lost once in a run)
    ended: list[str] = []
    for _ in range(50):
        await _lapse(a.store, task_id, "replica-a", a.holder)
        ended = [tid for tid, _ in await build_lease.end_lapsed(b.store.db, key=b.store.key)]
        if ended:
            break
    assert ended == [task_id]
    for _ in range(200):  # a's next renewal finds the lease gone and stops its runner
        if not a.is_running(task_id):
            break
        await asyncio.sleep(0.05)
    assert not a.is_running(task_id)
    status = await b.status(task_id)
    # the runner's own "cancelled" did not overwrite why the build ended; it is not run twice
    assert status["state"] == "FAILED" and status["error"].startswith(
        "interrupted: replica replica-a stopped"
    )
    assert await build_lease.end_lapsed(b.store.db) == []
    await a.close()
    await b.close()


async def test_a_build_that_finished_since_its_id_was_read_is_not_taken_for_lost(
    pg_url: str, tmp_path: Path
) -> None:
    """The lease keeper reads which builds run, then renews them: one may finish in between (its runner still
    winding down, closing its backend). Still this replica's, not lost (its runner was cancelled while it
    wound down); a build another replica ended is lost, whatever state it shows."""
    store = await SwarmStore(pg_url, key=swarm_key()).open()
    holder = "replica-a/k"
    done, ended = "t20261202-070000-0000a1", "t20261202-070000-0000a2"
    for tid in (done, ended):  # two callers' builds (a caller has one unfinished build at a time)
        lease = ("replica-a", holder, 600.0)
        assert await store.create_task(tid, SPEC, tmp_path / tid, principal=tid, lease=lease)
    await store.set_state(done, "COMPLETED")
    await _lapse(store, ended, "replica-a", holder)
    assert [tid for tid, _ in await build_lease.end_lapsed(store.db, key=store.key)] == [ended]
    assert await build_lease.renew(store.db, [done, ended], holder) == {done}
    assert (await store.get_task(done))["state"] == "COMPLETED"
    await store.close()


async def _lapse(store: SwarmStore, task_id: str, replica: str, holder: str) -> None:
    """Time passing for a lease (its runner could not renew it): set to have lapsed, signed as its holder's
    renewal signs it (set back in SQL alone, the lapse is forged: the end and its reason go unsigned)."""
    from sentinel_mcp.swarm.build_rows import lease_mac

    await store.db.write("UPDATE tasks SET lease_until = 0, lease_mac = ? WHERE task_id = ?",
                         (lease_mac(store.key, task_id, replica, holder, 0.0), task_id))


@pytest.mark.parametrize("spelling", ["'; DROP TABLE tasks; --", "replica\nb", "r" * 64])
async def test_the_reason_names_the_replica_as_data(pg_url: str, tmp_path: Path, spelling: str) -> None:
    store = await SwarmStore(pg_url, key=swarm_key()).open()
    tid = "t20261124-090000-abcdef"
    await store.create_task(tid, SPEC, tmp_path / tid, lease=(spelling, spelling + "/x", -1.0))
    assert await build_lease.end_lapsed(store.db, key=store.key) == [(tid, spelling)]
    assert (await store.get_task(tid))["error"].startswith(f"interrupted: replica {spelling} stopped")
    await store.close()


async def test_the_builds_page_of_any_replica_shows_a_dead_replicas_build_ended(
    pg_url: str, tmp_path: Path
) -> None:
    from tests.console.console_rig import ALICE, console_config, http_sentinel, signed_in

    cfg = console_config(tmp_path)
    body = json.loads(cfg.read_text())
    body["sentinel"]["builtins"] = [*body["sentinel"]["builtins"], "swarm"]
    body["sentinel"]["store"] = pg_url
    body["sentinel"]["cluster"] = {"replica": "replica-b", "seal_key": SEAL}
    cfg.write_text(json.dumps(body))
    store = await SwarmStore(pg_url, key=swarm_key()).open()
    tid = "t20261124-090000-a1a1a1"
    await store.create_task(
        tid,
        {"app_name": "Notes"},
        tmp_path / tid,
        principal="alice",
        lease=("replica-a", "replica-a/x", -1.0),
    )
    await store.close()
    with http_sentinel(cfg) as (base, _):
        async with signed_in(base, ALICE) as alice:
            detail = await alice.page(f"/console/builds/{tid}")
    assert "interrupted: replica replica-a stopped" in detail and "FAILED" in detail


async def test_a_restarted_replica_ends_its_own_old_builds_at_once_and_names_where_files_are(
    pg_url: str, tmp_path: Path
) -> None:
    store = await SwarmStore(pg_url, key=swarm_key()).open()
    own, other = "t20261124-090000-0a0a0a", "t20261124-090001-0b0b0b"
    # leases far from lapsing: only knowing its own name lets the restarted replica end its old build now
    await store.create_task(own, SPEC, tmp_path / own, lease=("replica-a", "replica-a/old", 600.0))
    assert await store.create_task(
        other, SPEC, tmp_path / "b" / other, principal="bob", lease=("replica-b", "replica-b/x", 600.0)
    )
    await store.close()
    a = _service(tmp_path / "a", pg_url, "replica-a")
    await a.start(sweep=False)
    status = await a.status(own)
    assert status["state"] == "FAILED" and status["error"].startswith(
        "interrupted: replica replica-a restarted"
    )
    theirs = await a.status(other)  # another replica's live build: untouched; its files are on its disk
    assert theirs["state"] == "PLANNING" and theirs["files"] == [] and not theirs["workspace_removed"]
    assert theirs["files_on_replica"] == "replica-b" and "replica replica-b's disk" in theirs["files_note"]
    assert await a.files_elsewhere(other) == "replica-b"
    await a.close()
