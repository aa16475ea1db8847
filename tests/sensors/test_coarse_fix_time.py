"""A coarse location's time stays as coarse as the scope shows it. Below ``detailed`` the fix's time is shown
cut to the minute (standard) or to ten minutes (minimal); yet a read with ``max_age`` was refused or served by
the fix's exact age, and the ``stale`` flag turned on at its exact 120th second, so a requester that read with
max_age 0, 1, 2, ... (or read every second until the flag turned) learned the fix's time to the second: what
the cut withholds. Now both judge the youngest the fix can be by the time shown (``youngest_age``). Two
phones whose fixes the scope shows alike answer every read alike, counted over every max_age; real SQLite,
the simulated phone with its last fix held at a set age."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from device_tools.sensors.bridge import SensorBridge
from device_tools.sensors.database import SensorDatabase
from device_tools.sensors.errors import SensorError
from device_tools.sensors.fix_time import TIME_CUT
from device_tools.sensors.reading import Reading
from device_tools.sensors.sources.simulated import START_EPOCH, SimulatedSource
from sentinel_mcp.core.sensor_kinds import Scope, SensorKind
from tests.sensors.conftest import ManualClock

pytestmark = pytest.mark.timeout(180)


class HeldFix(SimulatedSource):
    """The simulated phone, its last location fix made at ``fix_at`` (epoch seconds) whenever it is read."""

    def __init__(self, clock: ManualClock, fix_at: float) -> None:
        super().__init__(clock)
        self.fix_at = fix_at

    async def read(self, sensor: SensorKind) -> Reading:
        r = await super().read(sensor)
        return r.model_copy(update={"values": r.values | {"ageSeconds": r.taken_at - self.fix_at}})


async def _answers(tmp_path: Path, name: str, now: float, fix_at: float, scope: Scope,
                   max_ages: list[int | None]) -> list[tuple[str, bool, str]]:
    """What a requester learns from each read: served or refused (and why), the stale flag, the time."""
    wall, ticks = ManualClock(now), ManualClock()
    db = SensorDatabase(tmp_path / name)
    try:
        bridge = SensorBridge(HeldFix(wall, fix_at), db, clock=wall, monotonic=ticks)
        bridge.consents.grant("agent", SensorKind.location, scope)
        seen = []
        for max_age in max_ages:
            ticks.advance(60)  # past the rate limit; the wall clock (and so every age) stays
            request = {"sensor": "location", "scope": scope.value, "policy_tag": "location-for-search",
                       "retention": 0, "max_age": max_age}
            try:
                r = await bridge.handle(request, "agent")
                seen.append(("served", bool(r.payload.get("stale")), r.timestamp))
            except SensorError as e:
                seen.append((e.code, False, ""))
        return seen
    finally:
        db.close()


@pytest.mark.parametrize("scope", [Scope.standard, Scope.minimal])
@pytest.mark.parametrize("offset", [0, 31, 333])
async def test_two_fixes_shown_alike_answer_every_read_alike(tmp_path: Path, scope: Scope,
                                                             offset: int) -> None:
    step = TIME_CUT[scope]
    now = START_EPOCH + 7200 + offset
    for back in (0, 1, 2):  # the fix's cell: the one of now, and the two before it
        cell = math.floor(now / step) * step - back * step
        early, late = cell + 1, min(cell + step - 1, now)
        if late <= early:
            continue
        max_ages: list[int | None] = [None, *range(0, 3 * step + 2, step // 30)]
        a = await _answers(tmp_path, f"a{back}", now, early, scope, max_ages)
        b = await _answers(tmp_path, f"b{back}", now, late, scope, max_ages)
        differ = [(m, x, y) for m, x, y in zip(max_ages, a, b, strict=True) if x != y]
        assert differ == [], (scope, offset, back, differ[:5], len(differ))
        assert {x[0] for x in a} <= {"served", "stale_reading"}, a
        assert any(x[0] == "served" for x in a)  # the case is live: some reads are served


async def test_the_detailed_scope_still_judges_the_exact_age(tmp_path: Path) -> None:
    now = START_EPOCH + 7200
    a = await _answers(tmp_path, "d", now, now - 30, Scope.detailed, [29, 30, None])
    assert [x[0] for x in a] == ["stale_reading", "served", "served"], a
