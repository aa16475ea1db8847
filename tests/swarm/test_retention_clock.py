"""The retention sweep of an embedded store's FAILED builds ages an end of this boot by the machine's boot
clock (``swarm/build_age.py``), recorded with the end, not by the wall clock alone. The sweep runs in fresh
processes (``swarm gc``, a gateway's start) with no process clock from before: set forward a year, the wall
clock made the next sweep delete every FAILED build's files at once; set back a year, it kept them a year
longer. The wall clock is set with ``time.time`` patched; the boot clock is the machine's own (Linux)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from sentinel_mcp.core.boot_clock import boot_clock
from sentinel_mcp.swarm.retention import DAY, sweep
from sentinel_mcp.swarm.settings import SwarmSettings
from sentinel_mcp.swarm.state import SwarmStore

TID = "t20261205-170000-c0ffee"
STEPS = {"61 s": 61.0, "1 h": 3600.0, "1 year": 365 * DAY}
_time = time.time


def clock(monkeypatch: pytest.MonkeyPatch, by: float) -> None:
    monkeypatch.setattr(time, "time", lambda: _time() + by)


async def failed(root: Path, *, days_ago: float = 0.0) -> SwarmStore:
    """A FAILED build with files, ended ``days_ago`` days back by both clocks its end records."""
    store = await SwarmStore(root / "swarm.db").open()
    assert await store.create_task(TID, {"app_name": "n"}, root / TID)
    await store.set_state(TID, "FAILED", error="the coder broke the build")
    (root / TID).mkdir(parents=True)
    (root / TID / "a.txt").write_text("x")
    if days_ago:
        await store.db.write("UPDATE tasks SET finished_at = finished_at - ?, "
                             "ended_uptime = ended_uptime - ?", (days_ago * DAY, days_ago * DAY))
    return store


def test_the_machine_here_has_a_boot_clock() -> None:
    """The tests below count on it (Linux: CLOCK_BOOTTIME and a boot id)."""
    assert boot_clock() is not None


async def test_an_end_records_the_boot_clock(tmp_path: Path) -> None:
    store = await failed(tmp_path)
    try:
        (boot, at), = await store.db.query("SELECT ended_boot, ended_uptime FROM tasks")
        now = boot_clock()
        assert now is not None and boot == now[0] and 0.0 < at <= now[1]
    finally:
        await store.close()


@pytest.mark.parametrize("step", sorted(STEPS))
async def test_a_clock_set_forward_deletes_no_build_early(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    store = await failed(tmp_path)
    try:
        clock(monkeypatch, STEPS[step])
        report = await sweep(tmp_path, store, SwarmSettings())
        assert report.workspaces == [] and (tmp_path / TID / "a.txt").exists()
    finally:
        await store.close()


@pytest.mark.parametrize("step", sorted(STEPS))
async def test_a_clock_set_back_keeps_no_build_longer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    store = await failed(tmp_path, days_ago=8)
    try:
        clock(monkeypatch, -STEPS[step])
        report = await sweep(tmp_path, store, SwarmSettings())
        assert report.workspaces == [TID] and not (tmp_path / TID).exists()
    finally:
        await store.close()


@pytest.mark.parametrize("days", [1, 8])
async def test_an_end_of_another_boot_is_aged_by_the_wall_clock(tmp_path: Path, days: float) -> None:
    """The boot clock began again since: nothing but the wall clock spans a reboot."""
    store = await failed(tmp_path, days_ago=days)
    try:
        await store.db.write("UPDATE tasks SET ended_boot = 'an-earlier-boot'")
        report = await sweep(tmp_path, store, SwarmSettings())
        assert report.workspaces == ([TID] if days > 7 else [])
    finally:
        await store.close()
