"""An A2A ``sensor_request`` that names no retention is kept for the sensors' configured
``default_retention``, like an MCP call that names none. Before, the participant sent the design model's own
default (300 s), so a device whose owner configured ``default_retention: 0`` (never keep) kept every peer's
fix for five minutes. Through the real gateway's HTTP app with A2A mounted and the real sensors built-in."""

from __future__ import annotations

import json
import sqlite3
import uuid
from pathlib import Path

import httpx2
import pytest
from tests.a2a.a2a_rig import LOOPBACK, user_message
from tests.a2a.served_gateway import gateway_with_a2a
from websockets.asyncio.client import connect

from device_tools.sensors.consent_registry import ConsentRegistry
from device_tools.sensors.database import DB_FILENAME, SensorDatabase
from sentinel_mcp.core.sensor_kinds import Scope, SensorKind

pytestmark = pytest.mark.timeout(90)
ROVER = "rover-token-0123456789"


@pytest.mark.parametrize("binding", ["http", "ws"])
@pytest.mark.parametrize(("given", "kept"), [({}, 0), ({"retention": 60}, 1)], ids=["unnamed", "named"])
async def test_a_peers_request_without_retention_takes_the_configured_default(tmp_path: Path, given, kept,
                                                                               binding):
    raw = {"mcpServers": {}, "sentinel": {
        "data_dir": str(tmp_path), "builtins": ["sensors"], "sensors": {"default_retention": 0},
        "principals": [{"name": "rover", "token": ROVER}],
        "a2a": {"name": f"sentinel-ret-{uuid.uuid4().hex[:8]}", "interfaces": LOOPBACK,
                "allow_loopback_plaintext": True}}}
    (tmp_path / "sensors").mkdir()
    db = SensorDatabase(tmp_path / "sensors")
    try:
        ConsentRegistry(db).grant("rover", SensorKind.location, Scope.minimal)  # the owner's CLI grant
    finally:
        db.close()
    request = {"type": "sensor_request", "sensor": "location", "scope": "minimal",
               "policy_tag": "location-for-search", **given}
    async with gateway_with_a2a(raw, tmp_path) as gw:
        headers = {"A2A-Version": "1.0", "Authorization": f"Bearer {ROVER}"}
        if binding == "http":
            async with httpx2.AsyncClient(timeout=60, headers=headers) as http:
                body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                        "params": {"message": user_message({"data": request})}}
                task = (await http.post(gw.base + "/a2a", json=body)).json()["result"]["task"]
        else:  # the design's own sensor_request method over the WebSocket binding
            params = {k: v for k, v in request.items() if k != "type"}
            async with connect(gw.base.replace("http", "ws", 1) + "/a2a/ws", subprotocols=["a2a.v1.json"],
                               additional_headers=headers) as ws:
                await ws.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "sensor_request",
                                          "params": params}))
                task = json.loads(await ws.recv())["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
    with sqlite3.connect(tmp_path / "sensors" / DB_FILENAME) as conn:
        assert conn.execute("SELECT COUNT(*) FROM sensor_readings").fetchone()[0] == kept
        assert conn.execute("SELECT retention FROM sensor_audit").fetchall() == [(given.get("retention", 0),)]
