"""A build marked ended in SQL while its runner runs (no replica's signed end) stops its runner and is shown
as an end nobody vouched for. Before, the runner's lease renewal took such a row for its own end, "winding
down", so the runner went on spending model calls for a build its row said had FAILED (its own end then a
no-op: the forged one stayed), and every reader showed the forged end as the build's own. Now the renewal
takes only a signed end for its own, and a read names an unsigned end in ``unverified``. Its files stay kept
(an unsigned end is never swept), as before. Real PostgreSQL; the edits are plain SQL."""

from __future__ import annotations

import asyncio
from pathlib import Path

import psycopg
import pytest

from sentinel_mcp.swarm import build_lease
from sentinel_mcp.swarm.build_service import BuildService
from sentinel_mcp.swarm.settings import SwarmSettings
from sentinel_mcp.swarm.state import SwarmStore
from tests.cluster.lease_worker import LEASE, RENEW, SPEC, SilentModel, swarm_key

pytestmark = pytest.mark.timeout(120)
KEY = b"w" * 32
TID = "t20261205-180000-e0d0e0"
HOLDER = "replica-a/x"
NOW = "EXTRACT(EPOCH FROM clock_timestamp())"
ENDS = {
    "FAILED now": f"UPDATE tasks SET state = 'FAILED', finished_at = {NOW}",
    "COMPLETED now": f"UPDATE tasks SET state = 'COMPLETED', finished_at = {NOW}",
    "FAILED, another build's end": "UPDATE tasks SET state = 'FAILED', finished_at = 1, end_mac = "
                                   "(SELECT plan_mac FROM tasks LIMIT 1)",
}


def sql(url: str, text: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(text)


async def running(url: str, tmp: Path) -> SwarmStore:
    store = await SwarmStore(url, key=KEY).open()
    assert await store.create_task(TID, {"app_name": "n"}, tmp / TID, principal="bob",
                                   lease=("replica-a", HOLDER, 600.0))
    return store


@pytest.mark.parametrize("end", sorted(ENDS))
async def test_an_end_written_in_sql_is_not_taken_for_the_runners_own(pg_url: str, tmp_path: Path,
                                                                     end: str) -> None:
    store = await running(pg_url, tmp_path)
    try:
        sql(pg_url, ENDS[end])
        assert await build_lease.renew(store.db, [TID], HOLDER, key=KEY) == set()  # its runner stops
        task = await store.get_task(TID)
        assert task["state"] in ("FAILED", "COMPLETED") and "end" in task["unverified"]
    finally:
        await store.close()


@pytest.mark.parametrize("state", ["FAILED", "COMPLETED"])
async def test_the_runners_own_end_is_its_own_while_it_winds_down(pg_url: str, tmp_path: Path,
                                                                  state: str) -> None:
    store = await running(pg_url, tmp_path)
    try:
        await store.set_state(TID, state, error="boom" if state == "FAILED" else None)
        assert await build_lease.renew(store.db, [TID], HOLDER, key=KEY) == {TID}
        assert "unverified" not in await store.get_task(TID)
    finally:
        await store.close()


async def test_a_running_build_marked_failed_in_sql_stops_its_runner(pg_url: str, tmp_path: Path) -> None:
    service = BuildService(tmp_path / "a", SwarmSettings(), store=pg_url, replica="replica-a",
                           lease_seconds=LEASE, renew_every=RENEW, key=swarm_key())
    await service.start(sweep=False)

    async def silent() -> SilentModel:
        return SilentModel()

    try:
        tid = await service.submit(SPEC, silent, principal="bob")
        assert service.is_running(tid)
        sql(pg_url, ENDS["FAILED now"])
        for _ in range(200):  # bounded by count: renewals come every RENEW seconds
            if not service.is_running(tid):
                break
            await asyncio.sleep(0.05)
        assert not service.is_running(tid)
        status = await service.status(tid)
        assert status["state"] == "FAILED" and "end" in status["unverified"]
    finally:
        await service.close()
