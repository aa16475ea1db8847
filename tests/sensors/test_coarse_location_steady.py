"""A coarse location cannot be made fine by reading it often. A phone that stays put still reports fixes that
jitter by tens of metres; next to a cell's edge, plain rounding shows one cell or the other at random, and the
share of reads in each tells where between them the phone is (averaging a rounded, noisy value recovers the
precision the rounding took away). The cell a scope showed is shown again while the fix stays within a margin
of it, so a phone that stays put shows one cell however often it is read, and by whomever; a phone that moves
on shows its new cell. The fixes come from a Termux source whose termux-location is a real subprocess printing
the next fix of a list each time."""

from __future__ import annotations

import json
import random
import shlex
import stat
from pathlib import Path

import pytest

from device_tools.sensors.sources.termux import TermuxSource
from sentinel_mcp.core.sensor_kinds import Scope, SensorKind

pytestmark = pytest.mark.timeout(120)
READS = 40


def phone(tmp_path: Path, fixes: list[tuple[float, float, float]]) -> TermuxSource:
    """A termux-location that prints the next of ``fixes`` (latitude, longitude, accuracy in m) per call."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    queue = bin_dir / "fixes"
    queue.write_text("".join(json.dumps({"latitude": a, "longitude": o, "accuracy": acc, "provider": "gps",
                                         "elapsedMs": 500})
                             + "\n" for a, o, acc in fixes))
    q = shlex.quote(str(queue))
    path = bin_dir / "termux-location"
    path.write_text(f"#!/bin/sh\nhead -n 1 {q}\nsed -i 1d {q}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return TermuxSource(str(bin_dir), timeout=10)


def jitter(lat: float, lon: float, metres: float, n: int = READS) -> list[tuple[float, float, float]]:
    """A phone lying still at (lat, lon): fixes within ``metres`` of it two times in three, each saying so
    (Android's accuracy is the radius of 68 % confidence: about 1.5 standard deviations on each axis)."""
    rng, deg = random.Random(7), metres / 1.5 / 111_320
    return [(lat + rng.gauss(0, deg), lon + rng.gauss(0, deg), metres) for _ in range(n)]


async def shown(bridge, clock, scope: Scope, n: int, requesters=("agent-a",)) -> list[tuple[float, float]]:
    out = []
    for i in range(n):
        clock.advance(1.1)  # past the location's 1 Hz limit: every read is served
        request = {"sensor": "location", "scope": scope.value, "policy_tag": "nearby-search", "retention": 0}
        payload = (await bridge.handle(request, requesters[i % len(requesters)])).payload
        out.append((payload["latitude"], payload["longitude"]))
    return out


@pytest.mark.parametrize(("scope", "lat", "lon", "metres"), [
    (Scope.standard, 37.785, -122.415, 40),  # on the corner of four street-level cells, GPS jitter
    (Scope.standard, 37.7851, -122.4149, 800),  # a network fix, far less sure of itself
    (Scope.minimal, 38.0, -122.0, 900),  # on the corner of four city-level cells
])
async def test_a_phone_that_stays_put_shows_one_cell(tmp_path, make_bridge, clock, scope, lat, lon, metres):
    bridge = make_bridge(phone(tmp_path, jitter(lat, lon, metres)))
    for who in ("agent-a", "agent-b"):
        bridge.consents.grant(who, SensorKind.location, scope)
    # two requesters (two principals pooling what they read) see the same cell as one would
    cells = await shown(bridge, clock, scope, READS, requesters=("agent-a", "agent-b"))
    assert len(set(cells)) == 1, sorted(set(cells))


async def test_a_phone_that_moves_on_shows_its_new_cell(tmp_path, make_bridge, clock):
    # street level: from one corner to the next street's cells and on; a fix that claims to be sure of
    # nothing (a 1,000 km accuracy) does not hold the old cell for good
    fixes = [(37.785, -122.415, 10), (37.7851, -122.4151, 10), (37.7952, -122.4152, 10),
             (37.9, -122.3, 1e6), (38.2, -122.0, 1e6)]
    bridge = make_bridge(phone(tmp_path, fixes))
    bridge.consents.grant("agent-a", SensorKind.location, Scope.standard)
    cells = await shown(bridge, clock, Scope.standard, len(fixes))
    assert cells[0] == cells[1]  # the same place
    assert cells[2] == (37.80, cells[1][1])  # a street north: the new latitude, the same longitude
    assert cells[3] == (37.9, -122.3) and cells[4] == (38.2, -122.0)


async def test_each_scope_keeps_its_own_cell(tmp_path, make_bridge, clock):
    fixes = jitter(38.004, -122.415, 40, 8)
    bridge = make_bridge(phone(tmp_path, fixes))
    bridge.consents.grant("agent-a", SensorKind.location, Scope.standard)
    cells = await shown(bridge, clock, Scope.minimal, 4) + await shown(bridge, clock, Scope.standard, 4)
    assert set(cells[:4]) == {(38.0, -122.0)}
    assert len(set(cells[4:])) == 1 and cells[4][0] == 38.0 and cells[4][1] in (-122.41, -122.42)


async def test_replicas_and_restarts_show_the_cell_shown_before(tmp_path, make_bridge, clock):
    """The cell shown was held in the process: another replica (or this one after a restart) started from the
    next fix's own cell, so a requester alternating replicas, or reading after each restart, got one fresh
    rounding per replica, and the share of each cell among them tells where in between the phone lies (two
    replicas showing two cells for a phone lying still said it was by their edge). Now the cell is kept in the
    sensors' store, which replicas share: every bridge here has its own process state and the one store (the
    same SQLite file; on PostgreSQL, the shared database)."""
    fixes = [(37.7851, -122.4149, 40), (37.7849, -122.4151, 40)]  # either side of a street-level corner
    fixes += jitter(37.785, -122.415, 40, 10)
    source = phone(tmp_path, fixes)
    cells = []
    for _ in fixes:
        bridge = make_bridge(source)  # a replica of its own (or a restart), sharing the store
        bridge.consents.grant("agent-a", SensorKind.location, Scope.standard)
        cells += await shown(bridge, clock, Scope.standard, 1)
    assert len(set(cells)) == 1, cells
