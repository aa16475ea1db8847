"""The retention sweep of a server store's FAILED builds judges their age by the database's clock, the one
clock every replica and every fresh process shares, and a build's end is written on it. Before, a replica's
own wall clock wrote ``finished_at`` (``set_state``) and judged the age (``sweep``): set forward a year, the
next sweep (in a fresh process: nothing from before to measure by) deleted every FAILED build's files of the
cluster at once; set back, it kept them a year longer; and an end written with the clock off by a year was
off by it for every replica. The machine's clock is set with ``time.time`` patched (the database's is not
this process's to set)."""

from __future__ import annotations

import time
from pathlib import Path

import psycopg
import pytest

from sentinel_mcp.swarm import build_rows
from sentinel_mcp.swarm.retention import DAY, sweep
from sentinel_mcp.swarm.settings import SwarmSettings
from sentinel_mcp.swarm.state import SwarmStore

pytestmark = pytest.mark.timeout(120)
KEY = b"v" * 32
TID = "t20261205-170000-c0ffee"
STEPS = {"61 s": 61.0, "1 h": 3600.0, "1 year": 365 * DAY}
_time = time.time


def clock(monkeypatch: pytest.MonkeyPatch, by: float) -> None:
    monkeypatch.setattr(time, "time", lambda: _time() + by)


async def failed(url: str, root: Path, *, days_ago: float = 0.0) -> SwarmStore:
    """A FAILED build of this cluster, its end signed ``days_ago`` days back by the database's clock."""
    store = await SwarmStore(url, key=KEY).open()
    assert await store.create_task(TID, {"app_name": "n"}, root / TID, principal="bob",
                                   lease=("replica-a", "replica-a/x", 600.0))
    await store.set_state(TID, "FAILED", error="the coder broke the build")
    (root / TID).mkdir(parents=True)
    (root / TID / "a.txt").write_text("x")
    if days_ago:  # ended then (signed as its replica signed it then)
        at = await store.now() - days_ago * DAY
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("UPDATE tasks SET finished_at = %s, end_mac = %s WHERE task_id = %s",
                         (at, build_rows.end_mac(KEY, TID, "FAILED", at), TID))
    return store


@pytest.mark.parametrize("step", sorted(STEPS))
async def test_a_clock_set_forward_deletes_no_build_early(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    store = await failed(pg_url, tmp_path)
    try:
        clock(monkeypatch, STEPS[step])
        report = await sweep(tmp_path, store, SwarmSettings())
        assert report.workspaces == [] and (tmp_path / TID / "a.txt").exists()
    finally:
        await store.close()


@pytest.mark.parametrize("step", sorted(STEPS))
async def test_a_clock_set_back_keeps_no_build_longer(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    store = await failed(pg_url, tmp_path, days_ago=8)
    try:
        clock(monkeypatch, -STEPS[step])
        report = await sweep(tmp_path, store, SwarmSettings())
        assert report.workspaces == [TID] and not (tmp_path / TID).exists()
    finally:
        await store.close()


@pytest.mark.parametrize("step", sorted(STEPS))
@pytest.mark.parametrize("sign", [1, -1])
async def test_an_end_is_written_on_the_databases_clock(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str, sign: int
) -> None:
    """Ended by a replica whose clock is off: its end is when the database says (between the build's start
    and the next read of the database's clock), so every replica judges its age alike."""
    store = await SwarmStore(pg_url, key=KEY).open()
    try:
        assert await store.create_task(TID, {"app_name": "n"}, tmp_path / TID, principal="bob",
                                       lease=("replica-a", "replica-a/x", 600.0))
        clock(monkeypatch, sign * STEPS[step])
        await store.set_state(TID, "FAILED", error="x")
        task = await store.get_task(TID)
        monkeypatch.undo()
        assert task["created_at"] <= task["finished_at"] <= await store.now()
        assert "unverified" not in task
    finally:
        await store.close()
