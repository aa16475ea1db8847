"""A store's recovery is ordered against a read's start (``postgres._read_fault``): a read begun during an
outage that fails after the store recovered must not mark it down again, and a read begun after the recovery
that fails must. The order was taken by the wall clock: a step back during a read marked a recovered store as
down, and a recovery stamped while the clock was ahead (a step forward, then corrected) left a store failing
afterwards marked healthy. It is taken by the process clock (``core/process_clock.py``), which never goes
back."""

from __future__ import annotations

import time
from typing import Iterator

import pytest

from sentinel_mcp.core import process_clock
from sentinel_mcp.storage.health import StoreHealth

_time, _mono = time.time, time.monotonic


@pytest.fixture(autouse=True)
def fresh_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(process_clock, "CLOCK", process_clock.ProcessClock())
    yield
    monkeypatch.undo()


def wall(monkeypatch: pytest.MonkeyPatch, *, step: float, later_by: float) -> None:
    """The wall clock stepped by ``step`` (back when negative), ``later_by`` seconds having really passed."""
    monkeypatch.setattr(time, "time", lambda: _time() + step + later_by)
    monkeypatch.setattr(time, "monotonic", lambda: _mono() + later_by)


def degraded() -> StoreHealth:
    health = StoreHealth("audit")
    health.degrade("server closed the connection")
    return health


@pytest.mark.parametrize("back_by", [1, 61, 3600, 86400 * 365])
def test_a_step_back_during_a_read_does_not_mark_a_recovered_store_down(monkeypatch, back_by):
    health = degraded()
    started = health.reading()  # a read begins during the outage
    wall(monkeypatch, step=-back_by, later_by=0.5)
    health.recover()  # the store works again while the read is still failing
    assert health.recovered_after(started)


@pytest.mark.parametrize("ahead_by", [1, 61, 3600, 86400 * 365])
def test_a_step_forward_then_back_does_not_leave_a_failed_store_marked_healthy(monkeypatch, ahead_by):
    health = degraded()
    wall(monkeypatch, step=ahead_by, later_by=0)
    health.recover()  # stamped while the wall clock ran ahead
    wall(monkeypatch, step=0, later_by=0.5)  # the step corrected
    started = health.reading()  # a read begins after the recovery, and fails
    assert not health.recovered_after(started)


def test_a_step_forward_during_a_read_still_counts_the_recovery(monkeypatch):
    health = degraded()
    started = health.reading()
    wall(monkeypatch, step=3600, later_by=0.5)
    health.recover()
    assert health.recovered_after(started)
    wall(monkeypatch, step=3600, later_by=1)
    assert not health.recovered_after(health.reading())  # a read begun after it is its own


def test_a_store_still_down_is_never_recovered_after_anything(monkeypatch):
    health = degraded()
    started = health.reading()
    wall(monkeypatch, step=-3600, later_by=0.5)
    health.degrade("still down")
    assert not health.recovered_after(started)
    assert not health.recovered_after(0.0)


def test_since_is_shown_as_seconds_since_the_epoch():
    health = degraded()
    assert abs(health.as_dict()["since"] - _time()) < 86400  # type: ignore[operator]  # epoch, not uptime
