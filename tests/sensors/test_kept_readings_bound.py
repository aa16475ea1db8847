"""What a requester keeps, and what one answer returns, is bounded. A requester with consent to a sensor may
ask for every reading to be kept for a day: at the camera's pace that is tens of thousands of photos in the
store, all of which ``sensor_retained`` read into memory and returned in one result. Each requester keeps at
most ``MAX_KEPT_READINGS`` readings and ``MAX_KEPT_CHARS`` of them (its oldest go first: a retention is a
longest keep, never a promise), and one answer holds at most ``MAX_ANSWER_CHARS`` of its newest readings and
says how many it left out. Real SQLite; a Termux source whose Wi-Fi scan is a real subprocess printing 500
access points (a reading of 120 KB)."""

from __future__ import annotations

import json
import shlex
import stat
from pathlib import Path

import pytest

from device_tools.sensors import reading_vault
from device_tools.sensors.sources.termux import TermuxSource
from sentinel_mcp.core.sensor_kinds import Scope, SensorKind

pytestmark = pytest.mark.timeout(120)
ACCESS_POINTS = [{"bssid": f"02:00:00:00:{i // 256:02x}:{i % 256:02x}", "rssi": -40 - i % 50,
                  "ssid": f"network-{i:04d}-" + "x" * 200} for i in range(500)]


def scanning_phone(tmp_path: Path) -> TermuxSource:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    scan = bin_dir / "scan.json"
    scan.write_text(json.dumps(ACCESS_POINTS))
    path = bin_dir / "termux-wifi-scaninfo"
    path.write_text(f"#!/bin/sh\ncat {shlex.quote(str(scan))}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return TermuxSource(str(bin_dir), timeout=10)


async def keep(bridge, clock, n: int, sensor: str = "nearby_devices", scope: str = "detailed",
               who: str = "agent-a") -> None:
    for i in range(n):
        clock.advance(1.1)
        request = {"sensor": sensor, "scope": scope, "policy_tag": "survey", "retention": 86_400,
                   "task_id": f"{who}-{i}"}
        await bridge.handle(request, who)


def kept_bytes(bridge, who: str) -> int:
    rows = bridge.db.query("SELECT SUM(LENGTH(response)) AS n FROM sensor_readings WHERE requester=?", (who,))
    return int(rows[0]["n"] or 0)


async def test_a_requester_keeps_a_bounded_store_and_gets_a_bounded_answer(tmp_path, make_bridge, clock,
                                                                           monkeypatch):
    # the bounds scaled down (the mechanism is the same): a dozen reads past them, not hundreds
    monkeypatch.setattr(reading_vault, "MAX_KEPT_CHARS", 1_000_000)
    monkeypatch.setattr(reading_vault, "MAX_ANSWER_CHARS", 400_000)
    bridge = make_bridge(scanning_phone(tmp_path))
    bridge.consents.grant("agent-a", SensorKind.nearby_devices, Scope.detailed)
    one = len(json.dumps(ACCESS_POINTS))
    n = reading_vault.MAX_KEPT_CHARS // one + 8  # past the byte bound by a few readings
    await keep(bridge, clock, n)
    assert kept_bytes(bridge, "agent-a") <= reading_vault.MAX_KEPT_CHARS
    answer, left_out = bridge.retained_answer("agent-a")
    size = len(json.dumps(answer))
    assert size <= reading_vault.MAX_ANSWER_CHARS and answer, size
    tasks = [r["response"]["task_id"] for r in answer]
    assert tasks[-1] == f"agent-a-{n - 1}"  # the newest, in the order they were read
    assert tasks == sorted(tasks, key=lambda t: int(t.rsplit("-", 1)[1]))
    kept = bridge.db.query("SELECT COUNT(*) AS n FROM sensor_readings WHERE requester='agent-a'")[0]["n"]
    assert left_out == kept - len(answer) > 0


async def test_the_count_bound_drops_the_oldest_of_that_requester_only(make_bridge, clock, monkeypatch):
    monkeypatch.setattr(reading_vault, "MAX_KEPT_READINGS", 5)
    bridge = make_bridge()  # the simulated phone
    for who in ("agent-a", "agent-b"):
        bridge.consents.grant(who, SensorKind.battery, Scope.minimal)
    await keep(bridge, clock, 2, "battery", "minimal", "agent-b")
    await keep(bridge, clock, 9, "battery", "minimal", "agent-a")
    answer, left_out = bridge.retained_answer("agent-a")
    assert [r["response"]["task_id"] for r in answer] == [f"agent-a-{i}" for i in range(4, 9)]
    assert left_out == 0
    assert [r["response"]["task_id"] for r in bridge.retained("agent-b")] == ["agent-b-0", "agent-b-1"]
