"""The consents page says it covers "personal data and sensors": it listed the gateway's consents only, so a
sensor consent (``device_tools/sensors/consent_registry.py``) could be neither seen nor revoked there. Now the
signed-in principal's own sensor consents are listed (sensor, scope, granted, expiry) with a Revoke that
ends that one; after it the next sensor read asks again. Another principal's are neither shown nor
revocable; a form value that is no sensor, given twice or past its bound revokes nothing. A real Sentinel
over HTTP on 127.0.0.1 (the console rig), the real ``sensors consent`` command and the real sensors built-in.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
import sqlite3
import subprocess
import sys

import pytest

from tests.console.console_rig import (ALICE, BOB, console_config, env_for, http_sentinel, items_of,
                                       mcp_client, signed_in)

pytestmark = pytest.mark.timeout(180)
ROW = re.compile(r'action="/console/consents/sensors/revoke".*?name="sensor" value="([^"]*)"', re.S)


def sensors_cli(cfg, *args: str) -> None:
    out = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "sensors", "consent", *args],
                         capture_output=True, text=True, timeout=60, env=env_for(cfg))
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.fixture(scope="module")
def sentinel_proc(tmp_path_factory):
    cfg = console_config(tmp_path_factory.mktemp("console-sensor-consents"))
    body = json.loads(cfg.read_text())
    body["sentinel"]["builtins"] = [*body["sentinel"]["builtins"], "sensors"]
    cfg.write_text(json.dumps(body))
    sensors_cli(cfg, "grant", "location", "--requester", "alice", "--scope", "standard")
    sensors_cli(cfg, "grant", "motion", "--requester", "alice", "--expires-in", "3600")
    sensors_cli(cfg, "grant", "battery", "--requester", "bob")
    sensors_cli(cfg, "grant", "barometer", "--requester", "*")  # anyone's: shown to each, revoked by none
    # hostile rows written straight into the shared store: never shown as consents, never break the page
    db = sqlite3.connect(cfg.parent / "state" / "sensors" / "sensors.db")
    with db:
        db.execute("INSERT INTO sensor_consents (requester, sensor, scope, granted_at, expires_at, "
                   "granted_by) VALUES (?, ?, ?, 1.0, NULL, 'x')",
                   ("alice", "location/../battery", "standard"))
        db.execute("INSERT INTO sensor_consents (requester, sensor, scope, granted_at, expires_at, "
                   "granted_by) VALUES (?, ?, ?, 1.0, NULL, 'x')",
                   ("alice", "compass", "s" * 5000))
    db.close()
    with http_sentinel(cfg) as (base, proc):
        yield base, proc


@pytest.fixture(scope="module")
def sentinel(sentinel_proc):
    return sentinel_proc[0]


def sensor_rows(page: str) -> set[str]:
    return {html.unescape(s) for s in ROW.findall(page)}


async def read_location(base: str, token: str) -> str:
    async with mcp_client(base, token) as c:
        r = await c.call_tool("sensors__sensor_read", {"sensor": "location", "policy_tag": "console-test",
                                                       "scope": "minimal", "retention": 0})
        return json.dumps(r.structured_content or {}) + " ".join(getattr(b, "text", "") for b in r.content)


async def test_a_sensor_consent_is_shown_and_revoked_and_the_next_read_asks_again(sentinel):
    assert "consent_required" not in await read_location(sentinel, ALICE)  # the stored consent answers
    async with signed_in(sentinel, ALICE) as alice:
        page = await alice.page("/console/consents")
        assert sensor_rows(page) == {"location", "motion"}, page
        assert "standard" in page and "location/../battery" not in page and "s" * 200 not in page
        r = await alice.post("/console/consents/sensors/revoke", {"sensor": "location"})
        assert r.status_code == 303, r.text[:500]
        assert sensor_rows(await alice.page("/console/consents")) == {"motion"}
        # the next read asks again: its question reaches alice's inbox (her client cannot be asked); "no"
        call = asyncio.create_task(read_location(sentinel, ALICE))
        page = await alice.wait_items(1)
        assert "location" in page, page
        item = items_of(page)[0]
        assert (await alice.post(f"/console/inbox/{item}", {"decision": "deny"})).status_code == 303
        again = await asyncio.wait_for(call, 60)
    assert "consent_declined" in again and "latitude" not in again, again


async def test_another_principals_sensor_consents_are_invisible_and_unrevokable(sentinel):
    async with signed_in(sentinel, BOB) as bob:
        assert sensor_rows(await bob.page("/console/consents")) == {"battery"}
        r = await bob.post("/console/consents/sensors/revoke", {"sensor": "motion", "principal": "alice",
                                                                "requester": "alice"})
        assert r.status_code == 303
    async with signed_in(sentinel, ALICE) as alice:
        assert "motion" in sensor_rows(await alice.page("/console/consents"))


async def test_a_consent_to_anyone_is_shown_to_each_and_revoked_by_none_here(sentinel):
    for token in (ALICE, BOB):
        async with signed_in(sentinel, token) as person:
            page = await person.page("/console/consents")
            assert "barometer" in page and "granted to anyone" in page
            assert "barometer" not in sensor_rows(page)
            r = await person.post("/console/consents/sensors/revoke", {"sensor": "barometer"})
            assert r.status_code == 303  # the person's own barometer consent, which there is none of
            assert "granted to anyone" in await person.page("/console/consents")


@pytest.mark.parametrize("form", [
    {},                                             # no sensor: not "every sensor"
    {"sensor": ""},
    {"sensor": "*"},
    {"sensor": "motion/../battery"},
    {"sensor": "../motion"},
    {"sensor": "Motion"},
    {"sensor": "motion "},
    {"sensor": ["motion", "battery"]},              # given twice: neither is taken
    {"sensor": "motion" + "x" * 5000},              # past the bound: refused, never cut
])
async def test_a_sensor_that_is_absent_unknown_twice_or_too_long_revokes_nothing(sentinel, form):
    async with signed_in(sentinel, ALICE) as alice:
        before = sensor_rows(await alice.page("/console/consents"))
        assert "motion" in before
        r = await alice.post("/console/consents/sensors/revoke", form)
        assert r.status_code == 400 and "refused" in r.text, (r.status_code, r.text[:500])
        assert sensor_rows(await alice.page("/console/consents")) == before


async def test_the_revoke_needs_the_csrf_token(sentinel):
    async with signed_in(sentinel, ALICE) as alice:
        r = await alice.post("/console/consents/sensors/revoke", {"sensor": "motion"}, csrf=None)
        assert r.status_code in (400, 403)
        assert "motion" in sensor_rows(await alice.page("/console/consents"))


def _sensor_db_handles(pid: int) -> set[tuple[str, int]]:
    """The server process's open files on the sensors' store (its own, not its built-ins' subprocesses):
    (descriptor, inode) of each."""
    import os

    found = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if target.endswith("/sensors/sensors.db"):
                found.add((fd, os.stat(f"/proc/{pid}/fd/{fd}").st_ino))
        except OSError:
            continue  # closed meanwhile
    return found


async def test_the_consents_page_reads_the_sensors_store_the_built_in_holds_open(sentinel_proc):
    """The page builds its sensors' store per view (``console/sensor_consents.py``), but the storage seam
    shares one open database a process (``storage.open_database``, counted): the sensors built-in runs in
    the gateway's process and holds it from the start, so a view opens no connection of its own (one file
    handle, the same one, before and after any number of views)."""
    base, proc = sentinel_proc
    held = _sensor_db_handles(proc.pid)
    assert len(held) == 1, held  # the built-in's
    async with signed_in(base, ALICE) as alice:
        for _ in range(3):
            await alice.page("/console/consents")
            assert _sensor_db_handles(proc.pid) == held


async def test_a_view_opens_no_connection_beside_the_one_the_built_in_holds(tmp_path, monkeypatch):
    """In the gateway's process the sensors built-in holds the store open from its start; the consents
    page's reads and revokes go through that same open database (counted by the storage seam), never a
    connection of their own. Real SQLite; the connect is watched, not replaced."""
    from device_tools.sensors.database import SensorDatabase
    from sentinel_mcp.config import load_config
    from sentinel_mcp.console import sensor_consents
    from sentinel_mcp.core.sensor_kinds import SensorKind
    from sentinel_mcp.storage.sqlite import SQLiteDatabase

    cfg = console_config(tmp_path)
    body = json.loads(cfg.read_text())
    body["sentinel"]["builtins"] = [*body["sentinel"]["builtins"], "sensors"]
    cfg.write_text(json.dumps(body))
    sensors_cli(cfg, "grant", "location", "--requester", "alice")
    sensors_cli(cfg, "grant", "motion", "--requester", "alice")
    config = load_config(cfg)
    held = SensorDatabase(config.data_dir / "sensors", config.store_url)  # as the built-in holds it
    connects: list[object] = []
    real = SQLiteDatabase._connect

    def watched(self: SQLiteDatabase) -> None:
        connects.append(self.path)
        real(self)

    monkeypatch.setattr(SQLiteDatabase, "_connect", watched)
    try:
        for _ in range(3):
            found = await sensor_consents.listed(config, "alice")
            assert {c.sensor.value for c in found} >= {"location", "motion"}
        assert await sensor_consents.revoke(config, "alice", SensorKind("motion")) == 1
        assert {c.sensor.value for c in await sensor_consents.listed(config, "alice")} == {"location"}
        assert connects == []
        assert held.query("SELECT sensor FROM sensor_consents WHERE requester = 'alice'") == [
            {"sensor": "location"}
        ]
    finally:
        held.close()
