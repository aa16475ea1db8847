"""An A2A text or task_offer starts the agent loop (through the gateway's HTTP app with A2A mounted), only for
peers (principals) the owner allowed; risky steps are refused for a peer, which cannot answer for the owner,
and
a peer's run reads personal data only with that peer's consent, which the peer cannot give itself."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import httpx2
import pytest
from tests.agent.audit_rows import audit_rows
from tests.agent.phone_policies import read_newest_message, screen_of, sign_in_to_bank

from sentinel_mcp.paths import RULEBASES_DIR
from tests.a2a.a2a_rig import LOOPBACK, user_message
from tests.a2a.served_gateway import gateway_with_a2a

pytestmark = pytest.mark.timeout(120)
FAST_OPENAI = {"timeout": 5.0, "backoff_base": 0.01, "max_attempts": 2, "model": "scripted-1"}
ROVER = "rover-token-0123456789"
DRONE = "drone-token-0123456789"


def serve_gateway(tmp_path: Path, peers: list[str], tools: list[str] | None = None):
    raw = {
        "mcpServers": {},
        "sentinel": {
            "data_dir": str(tmp_path),
            "builtins": ["device", "agent"],
            "rulebases": [str(RULEBASES_DIR / "default.pl"), str(RULEBASES_DIR / "device.pl")],
            "device": {"backend": "simulated", "risk_classifier": False},
            "agent": {"backend": "openai", "openai": FAST_OPENAI, "a2a_peers": peers}
            | ({"tools": tools} if tools is not None else {}),
            "principals": [{"name": "rover", "token": ROVER}, {"name": "drone", "token": DRONE}],
            "a2a": {
                "name": f"sentinel-agent-{uuid.uuid4().hex[:8]}",
                "advertise": False,
                "interfaces": LOOPBACK,
            },
        },
    }
    return gateway_with_a2a(raw, tmp_path)


async def send(http, base: str, part: dict) -> dict:
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": user_message(part)}}
    reply = (await http.post(base + "/a2a", json=body)).json()
    task = reply["result"]["task"]
    for _ in range(600):  # the agent runs in the background; poll until the task ends
        if task["status"]["state"] not in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"):
            return task
        await asyncio.sleep(0.05)
        got = (
            await http.post(
                base + "/a2a",
                json={"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": task["id"]}},
            )
        ).json()
        task = got["result"]
    raise AssertionError(f"task did not end: {task['status']}")


async def test_a2a_text_and_task_offer_run_the_agent_for_allowed_peers_only(
    tmp_path, model_server, monkeypatch
):
    monkeypatch.setenv("SWARM_OPENAI_BASE_URL", model_server.url)
    monkeypatch.setenv("SWARM_OPENAI_API_KEY", "test-key")
    model_server.script("unknown", read_newest_message, read_newest_message, *[sign_in_to_bank] * 3)
    async with serve_gateway(tmp_path, ["rov*"]) as gw:
        base, holder = gw.base, gw.holder
        rover = {"A2A-Version": "1.0", "Authorization": f"Bearer {ROVER}"}
        async with httpx2.AsyncClient(timeout=60, headers=rover) as http:
            # the Messages screen is a messages read: the peer holds no consent and cannot give it itself
            unseen = await send(http, base, {"text": "open Messages and read the newest message"})
            assert unseen["status"]["state"] == "TASK_STATE_FAILED", unseen["status"]
            said = unseen["status"]["message"]["parts"][0]["text"]
            assert "refused" in said and "consent" in said, said
            assert "See you" not in json.dumps(unseen)
            holder.runtime.gateway.consent_gate.book.grant("rover", "messages", by="cli")
            done = await send(http, base, {"text": "open Messages and read the newest message"})
            assert done["status"]["state"] == "TASK_STATE_COMPLETED", done["status"]
            result = done["artifacts"][0]["parts"][0]["data"]["artifacts"][0]["content"]
            assert result["status"] == "completed" and result["answer"] == "Alice: See you at 7?"

            offer = {"data": {"type": "task_offer", "intent_id": "i-1", "intent": "sign in to my bank"}}
            risky = await send(http, base, offer)
            assert risky["status"]["state"] == "TASK_STATE_FAILED", risky["status"]
            text = risky["status"]["message"]["parts"][0]["text"]
            assert "refused" in text
        phone = holder.runtime.gateway.manager.upstreams["device"].target.server.runtime.backend
        assert phone.screen == "bank_login"  # the peer could not confirm the tap on Sign in


async def test_a_peer_the_owner_did_not_allow_cannot_drive_the_phone(tmp_path, model_server, monkeypatch):
    monkeypatch.setenv("SWARM_OPENAI_BASE_URL", model_server.url)
    monkeypatch.setenv("SWARM_OPENAI_API_KEY", "test-key")
    async with serve_gateway(tmp_path, ["rover"]) as gw:
        base = gw.base
        drone = {"A2A-Version": "1.0", "Authorization": f"Bearer {DRONE}"}
        async with httpx2.AsyncClient(timeout=60, headers=drone) as http:
            task = await send(http, base, {"text": "open Messages and read the newest message"})
        assert task["status"]["state"] == "TASK_STATE_FAILED"
        assert "has not allowed 'drone'" in task["status"]["message"]["parts"][0]["text"]
        assert model_server.requests == []  # not even the model was asked


async def test_a_peers_run_reads_personal_data_only_with_that_peers_consent(
    tmp_path, model_server, monkeypatch
):
    """The agent's steps are the peer's own calls: sms_list (personal: messages) passes the consent gate for
    the
    peer's principal; the peer cannot answer the consent question, so nothing is read, until the owner grants
    it
    (the CLI's consent book), and then only for that principal."""
    monkeypatch.setenv("SWARM_OPENAI_BASE_URL", model_server.url)
    monkeypatch.setenv("SWARM_OPENAI_API_KEY", "test-key")

    def read_sms(body):
        return json.dumps({"tool": "device__sms_list", "arguments": {"limit": 1}})

    def report(body):
        return json.dumps(
            {
                "action": "done",
                "snapshot_id": screen_of(body)[0],
                "element_id": None,
                "text": "read",
                "reasoning": "",
            }
        )

    model_server.script("unknown", read_sms, read_sms, report)
    async with serve_gateway(tmp_path, ["rover", "drone"], ["device__sms_list"]) as gw:
        base, holder = gw.base, gw.holder
        rover = {"A2A-Version": "1.0", "Authorization": f"Bearer {ROVER}"}
        async with httpx2.AsyncClient(timeout=60, headers=rover) as http:
            task = await send(http, base, {"text": "read my newest SMS"})
            assert task["status"]["state"] == "TASK_STATE_FAILED", task["status"]
            text = task["status"]["message"]["parts"][0]["text"]
            assert "refused" in text and "consent" in text, text
            rt = holder.runtime
            # the owner grants rover's consent for messages: the same run now reads them, for rover only
            rt.gateway.consent_gate.book.grant("rover", "messages", by="cli")
            done = await send(http, base, {"text": "read my newest SMS"})
            assert done["status"]["state"] == "TASK_STATE_COMPLETED", done["status"]
            result = done["artifacts"][0]["parts"][0]["data"]["artifacts"][0]["content"]
            assert [s.get("tool") for s in result["steps"]][:1] == ["device__sms_list"]
            assert result["steps"][0]["outcome"] == "done"
    # the audit log (readable once the gateway has stopped): the peer's read was asked, then allowed with
    # consent
    rows = audit_rows(tmp_path, "origin, principal, decision", "tool = 'device__sms_list' ORDER BY id")
    assert rows == [("a2a", "rover", "ask"), ("a2a", "rover", "allow")], rows
