"""End to end through the real gateway: its HTTP app with A2A mounted (``mount_a2a``), the real sensors
built-in on the simulated source, consent from the sensors CLI, the audit log in SQLite."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
import uuid
from pathlib import Path

import httpx2
import pytest
from tests.a2a.served_gateway import gateway_with_a2a
from tests.a2a.a2a_rig import LOOPBACK, multicast_problem, user_message
from mcp import Client

from sentinel_mcp.a2a.mcp_tools import create_server
from sentinel_mcp.gateway.audit import audit_files
from sentinel_mcp.core.builtin import BuiltinContext

pytestmark = pytest.mark.timeout(90)
ROVER = "rover-token-0123456789"
DRONE = "drone-token-0123456789"


def sensor_request(scope: str) -> dict:
    return {"data": {"type": "sensor_request", "sensor": "location", "scope": scope,
                     "policy_tag": "location-for-search"}}


async def test_sensor_request_through_the_gateway_honours_consent(tmp_path: Path):
    name = f"sentinel-e2e-{uuid.uuid4().hex[:8]}"
    raw = {"mcpServers": {}, "sentinel": {"data_dir": str(tmp_path), "builtins": ["sensors"],
                                          "principals": [{"name": "rover", "token": ROVER},
                                                         {"name": "drone", "token": DRONE}],
                                          # peer_networks []: it fetches no announced card, so another
                                          # test's Sentinel on loopback (another worker) is never its peer
                                          # and its card says "degraded" (no orchestrator, no peers)
                                          "a2a": {"name": name, "advertise": True, "interfaces": LOOPBACK,
                                                  "allow_loopback_plaintext": True, "peer_networks": []}}}
    cfg_file = tmp_path / "sentinel.json"
    cfg_file.write_text(json.dumps(raw))
    async with gateway_with_a2a(raw, tmp_path, source=str(cfg_file)) as gw:
        base, config = gw.base, gw.config
        rover = {"A2A-Version": "1.0", "Authorization": f"Bearer {ROVER}"}
        async with httpx2.AsyncClient(timeout=60, headers=rover) as http:
            card = (await http.get(base + "/.well-known/agent-card.json")).json()
            assert card["name"] == name and card["supportedInterfaces"][0]["url"] == base + "/a2a"
            sensors_status = card["capabilities"]["extensions"][1]["params"]["status"]
            assert sensors_status["sensors"] is True, sensors_status
            assert sensors_status["degraded"] is True, sensors_status

            async def send(scope: str, token: str = ROVER) -> dict:
                body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                        "params": {"message": user_message(sensor_request(scope))}}
                reply = (
                    await http.post(base + "/a2a", json=body, headers={"Authorization": f"Bearer {token}"})
                ).json()
                return reply["result"]["task"]

            # no token: no A2A at all (the agent card stays public)
            anonymous = await http.post(base + "/a2a", json={}, headers={"Authorization": ""})
            assert anonymous.status_code == 401

            # no consent: no data
            refused = await send("minimal")
            assert refused["status"]["state"] in (
                "TASK_STATE_FAILED",
                "TASK_STATE_REJECTED",  # consent is asked of the owner
                "TASK_STATE_INPUT_REQUIRED",
            ), refused
            assert "artifacts" not in refused
            # the device's owner grants this peer minimal-scope location, with the sensors CLI
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "sentinel_mcp",
                "-c",
                str(cfg_file),
                "sensors",
                "consent",
                "grant",
                "location",
                "--requester",
                "rover",
                "--scope",
                "minimal",
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            _out, err = await proc.communicate()
            assert proc.returncode == 0, err.decode()
            granted = await send("minimal")
            assert granted["status"]["state"] == "TASK_STATE_COMPLETED", granted
            result = granted["artifacts"][0]["parts"][0]["data"]
            reading = result["artifacts"][0]["content"]
            assert reading["type"] == "sensor_response" and reading["task_id"] == granted["id"]
            assert set(reading["payload"]) <= {"latitude", "longitude"}
            assert any("city" in r.lower() for r in reading["redactions"]), reading["redactions"]
            # above the granted scope: nothing is returned
            detailed = await send("detailed")
            assert detailed["status"]["state"] != "TASK_STATE_COMPLETED" and "artifacts" not in detailed
            # the consent is rover's: another principal on the same machine gets nothing
            other = await send("minimal", DRONE)
            assert other["status"]["state"] != "TASK_STATE_COMPLETED" and "artifacts" not in other
        # another agent finds this gateway over mDNS (card verified) and asks with its a2a_send tool
        expected_rows = 3
        if multicast_problem() is None:
            ctx = BuiltinContext(
                name="a2a",
                data_dir=tmp_path / "peer",
                settings={"name": "peer-agent", "interfaces": LOOPBACK, "peer_tokens": {base: ROVER},
                          "allow_loopback_plaintext": True},
            )
            async with Client(create_server(ctx)) as peer_tools:
                for _ in range(5):  # the gateway's announcement may still be probing
                    found = (await peer_tools.call_tool("a2a_discover", {"timeout": 2})).structured_content
                    if any(p["name"] == name for p in found["peers"]):
                        break
                assert any(p["name"] == name and p["rpc_url"] == base + "/a2a" for p in found["peers"]), found
                sent = await peer_tools.call_tool(
                    "a2a_send", {"peer": name, "data": sensor_request("minimal")["data"]}
                )
                task = sent.structured_content["task"]
                assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
                reading = task["artifacts"][0]["parts"][0]["data"]["artifacts"][0]["content"]
                assert any("city" in r.lower() for r in reading["redactions"])
            expected_rows = 4
    # every A2A call is in the gateway's audit log with its origin and the caller's principal
    # (one row per finished call: an allowed call also has its decision row, written before it ran)
    rows = []
    for file in audit_files(config.store_path):  # the gateway's own log, in its instance directory
        with sqlite3.connect(file) as db:
            rows += db.execute(
                "SELECT origin, principal, tool FROM audit WHERE tool = 'sensors__sensor_read' "
                "AND event != 'decision'"
            ).fetchall()
        db.close()
    assert len(rows) == expected_rows + 1
    assert sorted(r[1] for r in rows) == ["drone"] + ["rover"] * expected_rows and {r[0] for r in rows} == {
        "a2a"
    }
