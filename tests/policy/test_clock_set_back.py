"""The wall clock set back (NTP stepping a fast clock back, an operator's ``date -s``, a VM restored from a
snapshot) must not lengthen a fact's time to live: a 60 s fact is gone 61 s after it was learned, whatever the
wall clock says meanwhile. Every TTL of the policy is measured by one process clock that never goes back
(``core/process_clock.py``): the fact store, the engine mirror's expiry (the ``Now`` every Prolog pass
compares with), confirmations stored as facts. A fact stored before a restart with a time later than the
clock's (the clock was set back while the gateway was down) is dropped: its age is unknown."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Iterator

import pytest
from tests.policy.policy_rig import rig

from sentinel_mcp.core import process_clock
from sentinel_mcp.core.decision import Ask
from sentinel_mcp.policy.fact_store import Fact, FactStore

pytestmark = pytest.mark.timeout(60)

_time, _mono = time.time, time.monotonic


@pytest.fixture(autouse=True)
def fresh_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # this module moves the clock forward; the tests after it get the real one back
    monkeypatch.setattr(process_clock, "CLOCK", process_clock.ProcessClock())
    yield
    monkeypatch.undo()


def set_back(monkeypatch: pytest.MonkeyPatch, *, wall_by: float, later_by: float) -> None:
    """From now on the wall clock reads ``wall_by`` seconds earlier, while ``later_by`` seconds pass (both
    clocks keep running, so the event loop's timers still fire)."""
    monkeypatch.setattr(time, "time", lambda: _time() - wall_by + later_by)
    monkeypatch.setattr(time, "monotonic", lambda: _mono() + later_by)


def _fact(at: float, ttl: float, args: list[str] | None = None) -> Fact:
    a = args or ["R1", "business"]
    return Fact(session="s", predicate="cabin", args=a, fact=f"cabin('{a[0]}',{a[1]})", provenance="observed",
                established_at=at, expires_at=at + ttl)


async def test_a_clock_set_back_does_not_keep_an_expired_fact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = await FactStore(tmp_path / "facts.db").open()
    try:
        learned = time.time()
        await store.add([_fact(learned, 60)])
        assert [f.fact for f in await store.valid("s")] == ["cabin('R1',business)"]
        # 61 s later by the monotonic clock, while the wall clock was set back by an hour
        set_back(monkeypatch, wall_by=3600, later_by=61)
        assert await store.valid("s") == []
        assert await store.known_values("s", ["R1"]) == set()
        assert await store.purge_expired() == 1
    finally:
        monkeypatch.undo()
        await store.close()


async def test_the_engine_mirror_expires_by_the_same_clock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Prolog side compares a mirrored fact's expiry with the ``Now`` of the pass: a fact of 60 s is
    fetched again 61 s later though the wall clock says it is an hour younger."""
    async with rig(tmp_path / "facts.db") as r:
        call = r.port.call_of("bk__cancel_booking", {"booking_id": "BK-789"})
        assert isinstance(await r.guard.decide(call), Ask)
        assert isinstance(await r.guard.decide(call), Ask)
        assert r.state["calls"]["get_booking"] == 1  # still valid: used from the mirror
        set_back(monkeypatch, wall_by=3600, later_by=61)
        await r.guard.decide(call)
        assert r.state["calls"]["get_booking"] == 2  # expired: fetched again


@pytest.mark.parametrize("step", [3600.0, 30.0, 0.5])
async def test_a_fact_from_before_a_restart_with_the_clock_set_back_is_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: float
) -> None:
    """Stored at T (expires T + 60); the clock set back by ``step`` while the gateway was down. Kept, the
    fact would be valid until T + 60 by the new clock: its TTL plus the step. It is dropped when the store
    opens, and never comes back as the clock reaches its time."""
    db = tmp_path / "facts.db"
    learned = time.time()
    async with FactStore(db) as store:
        await store.add([_fact(learned, 60), _fact(learned - step - 10, step + 120, ["R2", "economy"])])
    set_back(monkeypatch, wall_by=step, later_by=0)
    monkeypatch.setattr(process_clock, "CLOCK", process_clock.ProcessClock())  # a new process
    async with FactStore(db) as store:
        assert [f.fact for f in await store.valid("s")] == ["cabin('R2',economy)"]  # the one from its past
        set_back(monkeypatch, wall_by=step, later_by=step + 1)  # the clock passes T again
        assert [f.fact for f in await store.valid("s")] == ["cabin('R2',economy)"]
        assert await store.count("s") == 1


def test_the_clock_never_goes_back_and_follows_the_wall_forward(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = process_clock.ProcessClock()
    readings: list[float] = []
    read: Callable[[], None] = lambda: readings.append(clock.now())  # noqa: E731
    read()
    set_back(monkeypatch, wall_by=3600, later_by=1)
    read()
    assert readings[1] >= readings[0] + 1 - 0.5  # went on by the monotonic clock, not back an hour
    set_back(monkeypatch, wall_by=-7200, later_by=2)  # set forward (a device woke from sleep)
    read()
    assert readings[2] >= _time() + 7200
    set_back(monkeypatch, wall_by=0, later_by=3)  # back to the true time: the clock does not go back
    read()
    assert readings == sorted(readings)
