"""Shared helpers for the sensors tests: recorded outputs, a settable clock, a bridge on real SQLite."""

from __future__ import annotations

from pathlib import Path

import pytest

from device_tools.sensors.bridge import SensorBridge
from device_tools.sensors.database import SensorDatabase
from device_tools.sensors.sources.simulated import START_EPOCH, SimulatedSource

from tests.sensors.sensors_support import FIXTURES, recorded  # noqa: E402,F401


class ManualClock:
    """Time that moves only when a test says so (no sleeping, no timing thresholds)."""

    def __init__(self, start: float = START_EPOCH) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def make_bridge(tmp_path: Path, clock: ManualClock):
    opened: list[SensorDatabase] = []

    def make(source=None, **kw) -> SensorBridge:
        db = SensorDatabase(tmp_path / "sensors")
        opened.append(db)
        return SensorBridge(source or SimulatedSource(clock), db, clock=clock, monotonic=clock, **kw)

    yield make
    for db in opened:
        db.close()
