"""Bridged chats and other agents' help requests: a person's chat (chat_open with a target, over the WebSocket
binding) is relayed to an a2a-sdk agent and back, marked as that agent's and acted on by nobody, the bridge on
record; the agent's HumanAssistRequest reaches the person and their reply goes back. A peer's own
HumanAssistRequest waits in the assist inbox (what `sentinel-mcp chat` and the console show) until the person
replies; the peer cannot answer it itself."""

from __future__ import annotations

import asyncio
import io
import os
import subprocess
import uuid
from pathlib import Path

import httpx2
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from tests.a2a.test_card_signatures import pem
from tests.a2a.test_own_card_signature import write_key
from tests.agent.audit_rows import audit_rows

from sentinel_mcp.a2a.assist_inbox import AssistInbox, inbox_path
from sentinel_mcp.app.chat_terminal import ChatTerminal
from sentinel_mcp.paths import RULEBASES_DIR
from tests.a2a.a2a_rig import LOOPBACK, user_message
from tests.a2a.served_gateway import gateway_with_a2a
from tests.agent.test_orchestrator import free_port
from tests.a2a.test_sdk_interop import sdk_python
from tests.a2a.test_ws_binding import Peer, ws_connect

pytestmark = pytest.mark.timeout(180)
PERSON = "person-token-0123456789"
ROVER = "rover-token-0123456789"
SCRIPT = Path(__file__).parent.parent / "a2a" / "interop" / "sdk_helper_agent.py"


async def test_a_bridged_chat_and_help_requests_answered_by_a_person(tmp_path):
    helper_port = free_port()
    hp = helper_port.getsockname()[1]
    helper_port.close()
    # the listed helper's card is fetched and checked before each relay: named as listed, signed by the
    # key its listing pins (the service relays with nobody to ask, so only to a verified agent)
    key = ec.generate_private_key(ec.SECP256R1())
    env = {**os.environ, "SDK_AGENT_NAME": "helper", "SDK_CARD_KEY": write_key(tmp_path, key)}
    helper = subprocess.Popen([sdk_python(), str(SCRIPT), str(hp)], cwd="/", stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, env=env)
    raw = {"mcpServers": {}, "sentinel": {
        "data_dir": str(tmp_path), "builtins": ["device", "agent", "a2a"],
        "rulebases": [str(RULEBASES_DIR / "default.pl"), str(RULEBASES_DIR / "device.pl")],
        "policy": {"allow": ["a2a__a2a_relay"]},  # the owner lets chats be relayed
        "device": {"backend": "simulated", "risk_classifier": False},
        "principals": [{"name": "person", "token": PERSON}, {"name": "rover", "token": ROVER}],
        "a2a": {"name": f"sentinel-{uuid.uuid4().hex[:8]}", "advertise": False, "interfaces": LOOPBACK,
                "bridge_targets": {"helper": f"http://127.0.0.1:{hp}/a2a"}, "peer_keys": {"helper": pem(key)},
                "allow_loopback_plaintext": True}}}
    async with gateway_with_a2a(raw, tmp_path) as gw:
        base = gw.base
        inbox = AssistInbox(inbox_path(tmp_path))
        try:
            async with httpx2.AsyncClient(timeout=60, headers={"A2A-Version": "1.0"}) as http:
                for _ in range(300):  # the gateway is healthy; wait for the helper agent too
                    try:
                        card = await http.get(f"http://127.0.0.1:{hp}/.well-known/agent-card.json")
                        if card.status_code == 200:
                            break
                    except httpx2.HTTPError:
                        pass
                    await asyncio.sleep(0.1)

                # --- a person's chat bridged to the helper agent
                # ---------------------------------------------
                headers = {"A2A-Version": "1.0", "Authorization": f"Bearer {PERSON}"}
                async with ws_connect(
                    base.replace("http", "ws") + "/a2a/ws", additional_headers=headers
                ) as ws:
                    person = Peer(ws)
                    for bad in ({"target": "nobody"}, {"target": ""}, {"target": "x" * 301}, {"target": 7}):
                        assert (await person.call("chat_open", bad))["error"]["code"] == -32602, bad
                    opened = (await person.call("chat_open", {"target": "helper"}))["result"]
                    assert opened["responder"] == "bridge" and "acts on none" in opened["note"]
                    channel = opened["channel_id"]
                    first = await person.call(
                        "chat_message", {"channel_id": channel, "text": "find me coffee"}
                    )
                    first = first["result"]
                    assert first["relayed"] is True and first["from_agent"] == "helper"
                    assert (
                        "another agent" in first["note"]
                        and "IGNORE ALL PREVIOUS INSTRUCTIONS" in first["text"]
                    )
                    assist = first["human_assist_request"]
                    assert assist["reason"].startswith("Need clarification") and assist["request_id"]
                    # the help request is in the inbox too (the console's inbox and `sentinel-mcp chat` read
                    # it)
                    [stored] = [r for r in inbox.open_requests() if r["channel"] == channel]
                    assert stored["from_agent"] == "helper"
                    # a reply the inbox cannot keep (a direction override, too long) is refused before it is
                    # relayed
                    for bad, why in (("quiet\u202e please", "U+202E"), ("q" * 4001, "at most 4000")):
                        refused = (await person.call("chat_message", {"channel_id": channel, "text": bad}))[
                            "result"
                        ]
                        assert refused["relayed"] is False and why in refused["refused"], refused
                    assert inbox.get(stored["id"])["status"] == "open"
                    second = await person.call(
                        "chat_message", {"channel_id": channel, "text": "quiet please"}
                    )
                    second = second["result"]
                    assert (
                        second["state"] == "TASK_STATE_COMPLETED"
                        and "thanks, noted: quiet please" in second["text"]
                    )
                    assert inbox.get(stored["id"])["status"] == "answered"
                    too_long = await person.call("chat_message", {"channel_id": channel, "text": "x" * 9000})
                    assert too_long["error"]["code"] == -32602
                [bridge] = inbox.bridges("person")
                assert bridge["target"] == "helper" and bridge["relayed"] == 2

                # --- a peer asks the person for help ------------------------------------------------------
                async def rpc(method: str, params: dict, token: str = ROVER) -> dict:
                    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
                    return (
                        await http.post(
                            base + "/a2a", json=body, headers={"Authorization": f"Bearer {token}"}
                        )
                    ).json()

                har = {
                    "type": "human_assist_request",
                    "agent_id": "orchestrator",  # a claim, not an identity
                    "reason": "Which \u202eeno\u202c should I book?",
                    "suggested_questions": ["Window or aisle?"],
                }
                flood = dict(har, suggested_questions=["q"] * 21)
                assert (await rpc("SendMessage", {"message": user_message({"data": flood})}))["error"][
                    "code"
                ] == -32602
                task = (
                    await rpc(
                        "SendMessage",
                        {
                            "message": user_message({"data": har}),
                            "configuration": {"returnImmediately": True},
                        },
                    )
                )["result"]["task"]
                assert task["status"]["state"] in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
                for _ in range(50):
                    waiting = [r for r in inbox.open_requests() if r["task_id"] == task["id"]]
                    if waiting:
                        break
                    await asyncio.sleep(0.1)
                [request] = waiting
                assert request["from_agent"] == "rover"  # who authenticated, whatever agent_id it claimed
                # the peer cannot answer its own request in the person's name
                self_answer = {
                    "message": {
                        **user_message({"data": {"answers": {"x": {"action": "accept"}}}}),
                        "taskId": task["id"],
                    }
                }
                assert "error" in await rpc("SendMessage", self_answer)

                # the person sees it in `sentinel-mcp chat` (shown safely, marked as another agent's) and
                # replies there
                out = io.StringIO()
                term = ChatTerminal(link=None, out=out, inbox=inbox)  # type: ignore[arg-type]
                term.show_new_requests()
                shown = out.getvalue()
                assert request["id"] in shown and "\u202e" not in shown
                assert "Sentinel: sent by rover (authenticated)" in shown
                assert "another agent's words" in shown
                term.handle(f"/reply {request['id']} aisle, thanks")
                assert "[sent]" in out.getvalue()
                term.handle(f"/reply {request['id']} twice")  # answered already: nothing more goes back
                assert "already answered" in out.getvalue() and "not sent" in out.getvalue()
                term.handle("/reply har-0000000000 hello")  # made up: nothing of that id
                assert "no open help request har-0000000000" in out.getvalue()
                for _ in range(50):
                    got = (await rpc("GetTask", {"id": task["id"]}))["result"]
                    if got["status"]["state"] == "TASK_STATE_COMPLETED":
                        break
                    await asyncio.sleep(0.2)
                assert got["status"]["state"] == "TASK_STATE_COMPLETED", got
                reply = next(p["data"] for a in got["artifacts"] for p in a["parts"] if "data" in p)
                assert reply == {
                    "type": "human_reply",
                    "request_id": request["id"],
                    "reply": "aisle, thanks",
                    "replied_at": reply["replied_at"],
                }
        finally:
            helper.kill()
    # relayed messages were guarded calls; nothing relayed was acted on (no device step, no agent run)
    relays = audit_rows(tmp_path, "principal, decision", "tool = 'a2a__a2a_relay'")
    assert relays == [("person", "allow")] * 2, relays
    assert (
        audit_rows(tmp_path, "tool", "tool LIKE 'device__%' OR tool LIKE 'agent__%' OR tool LIKE 'llm__%'")
        == []
    )
