"""The agent card (v1.0 fields, interface order, ETag/304) and auth on both bindings (401)."""

from __future__ import annotations

import json
import socket

import pytest
from tests.a2a.a2a_rig import open_port, rpc, serve, user_message
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from sentinel_mcp.a2a.protocol import AgentCard
from sentinel_mcp.a2a.settings import A2ASettings
from sentinel_mcp.config import ConfigError

pytestmark = pytest.mark.timeout(60)

TOKEN = "s3cret-token-value"


async def test_card_fields_interfaces_and_etag(rig, http):
    r = await http.get(rig.base_url + "/.well-known/agent-card.json")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    card = r.json()
    AgentCard.model_validate(card)
    for key in ("name", "description", "supportedInterfaces", "version", "capabilities",
                "defaultInputModes", "defaultOutputModes", "skills"):
        assert key in card
    first, second = card["supportedInterfaces"]
    assert first == {"url": rig.base_url + "/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    assert second["protocolBinding"] == "JSONRPC-WS" and second["url"] == rig.ws_url
    assert {s["id"] for s in card["skills"]} == {"sensor_request", "tool_call", "chat"}
    assert "securitySchemes" not in card  # no auth configured
    assert "degraded mode" in card["description"]
    etag = r.headers["etag"]
    assert etag.startswith('W/"')
    r304 = await http.get(rig.base_url + "/.well-known/agent-card.json", headers={"If-None-Match": etag})
    assert r304.status_code == 304 and r304.content == b""
    r200 = await http.get(
        rig.base_url + "/.well-known/agent-card.json", headers={"If-None-Match": 'W/"other"'}
    )
    assert r200.status_code == 200


async def test_auth_on_http_and_ws_and_card_declares_it(http):
    settings = A2ASettings(token=TOKEN, token_identity="orchestrator", api_keys={"rover": "rover-key-1234"})
    async with open_port() as port, serve(port, settings) as srv:
        card = (await http.get(srv.base_url + "/.well-known/agent-card.json")).json()  # the card stays public
        assert card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"] == "Bearer"
        assert card["securitySchemes"]["apiKey"]["apiKeySecurityScheme"] == {
            "location": "header",
            "name": "X-API-Key",
        }
        assert {"schemes": {"bearer": {"list": []}}} in card["securityRequirements"]
        body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}
        for headers in (
            {},
            {"Authorization": "Bearer wrong-token-xx"},
            {"X-API-Key": "nope-nope-nope"},
            {"Authorization": "Basic dXNlcjpwYXNz"},
        ):
            r = await http.post(srv.rpc_url, json=body, headers=headers)
            assert r.status_code == 401, headers
            assert "Bearer" in r.headers["www-authenticate"] and "X-API-Key" in r.headers["www-authenticate"]
        ok = await rpc(
            http,
            srv.rpc_url,
            "SendMessage",
            {
                "message": user_message(
                    {
                        "data": {
                            "type": "tool_call",
                            "tool_call_id": "1",
                            "name": "tools__echo",
                            "args": {"text": "t"},
                        }
                    }
                )
            },
            headers={"Authorization": f"Bearer {TOKEN}"},
        )
        assert ok["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        assert port.calls[-1].client == "orchestrator"
        # WebSocket: refused at the upgrade with 401, accepted with a key
        with pytest.raises(InvalidStatus) as exc:
            async with connect(srv.ws_url):
                pass
        assert exc.value.response.status_code == 401
        async with connect(srv.ws_url, additional_headers={"X-API-Key": "rover-key-1234"}) as ws:
            await ws.send(
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "tool_call",
                        "params": {"tool_call_id": "w", "name": "tools__echo", "args": {"text": "w"}},
                    }
                )
            )
            reply = json.loads(await ws.recv())
            assert reply["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        assert port.calls[-1].client == "rover"


def test_settings_errors_name_the_key(tmp_path):
    with pytest.raises(ConfigError, match=r"sentinel\.a2a\.token"):
        A2ASettings.from_section({"token": "short"})
    with pytest.raises(ConfigError, match=r"sentinel\.a2a\.colour"):
        A2ASettings.from_section({"colour": "blue"})
    with pytest.raises(ConfigError, match="TLS file not found"):
        A2ASettings.from_section({"tls_cert": str(tmp_path / "none.pem"), "tls_key": str(tmp_path / "k.pem")})
    assert A2ASettings.from_section(None).name == "Sentinel"


async def test_card_examples_are_accepted_as_they_are(rig, http):
    card = (await http.get(rig.base_url + "/.well-known/agent-card.json")).json()
    examples = [json.loads(e) for s in card["skills"] for e in s.get("examples", [])]
    assert examples
    for example in examples:
        body = await rpc(http, rig.rpc_url, "SendMessage", {"message": user_message({"data": example})})
        assert body["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", body


async def test_the_public_card_says_whether_an_orchestrator_is_there_never_where(tmp_path):
    """The card is served to anyone who asks (no auth). Its status named the orchestrator's endpoint as
    configured, so a credential or key in that URL, and where the orchestrator lives, went to every caller;
    it also counted the verified peers and the catalog's tools. Now the card says only what a caller needs:
    degraded or not, whether an orchestrator is there, the local LLM and the sensors; so does a chat's
    answer (a signed-in peer is another agent all the same)."""
    from tests.a2a.served_gateway import gateway_with_a2a
    from tests.a2a.test_ws_binding import Peer, ws_connect
    from sentinel_mcp.paths import RULEBASES_DIR
    import httpx2

    orchestrator = "http://svc:hunter2-password@127.0.0.1:9/a2a?key=orchestrator-api-key"
    raw = {"mcpServers": {}, "sentinel": {
        "data_dir": str(tmp_path), "builtins": [], "rulebases": [str(RULEBASES_DIR / "default.pl")],
        "principals": [{"name": "person", "token": TOKEN}],
        "a2a": {"name": "card-test", "orchestrator_url": orchestrator}}}
    async with gateway_with_a2a(raw, tmp_path) as gw, httpx2.AsyncClient(timeout=30) as http:
        r = await http.get(gw.base + "/.well-known/agent-card.json")
        assert r.status_code == 200
        for secret in ("hunter2", "orchestrator-api-key", "127.0.0.1:9"):
            assert secret not in r.text, secret
        card = r.json()
        [ext] = [e for e in card["capabilities"]["extensions"] if "status" in (e.get("params") or {})]
        status = ext["params"]["status"]
        assert status["orchestrator"] is True and status["degraded"] is False, status
        assert set(status) == {"degraded", "orchestrator", "local_llm", "sensors", "note"}, status
        headers = {"A2A-Version": "1.0", "Authorization": f"Bearer {TOKEN}"}
        async with ws_connect(gw.base.replace("http", "ws") + "/a2a/ws", additional_headers=headers) as ws:
            opened = (await Peer(ws).call("chat_open", {}))["result"]  # a signed-in peer reads the same
            assert opened["status"] == status and "hunter2" not in json.dumps(opened)


async def test_a_peer_never_reads_where_the_orchestrator_is(tmp_path):
    """A peer's intent is offered to the orchestrator first; when the offer fails the task runs locally and
    says why, and when it is taken the result names who took it. Both named the orchestrator's configured URL,
    so its credential went to the peer; now neither does (the reason says what went wrong, not where)."""
    import sys
    from pathlib import Path

    import httpx2

    from sentinel_mcp.paths import RULEBASES_DIR
    from tests.a2a.served_gateway import gateway_with_a2a

    gone = socket.socket()
    gone.bind(("127.0.0.1", 0))  # bound, never listening: the offer is refused at once
    orchestrator = f"http://svc:hunter2-password@127.0.0.1:{gone.getsockname()[1]}/a2a?key=orchestrator-api-key"
    stand_in = Path(__file__).parent / "stand_in_llm.py"
    llm = {"command": sys.executable, "args": [str(stand_in), str(tmp_path / "llm.log")]}
    raw = {"mcpServers": {"llm": llm},
           "sentinel": {
               "data_dir": str(tmp_path), "builtins": ["a2a"],
               "rulebases": [str(RULEBASES_DIR / "default.pl")],
               "policy": {"allow": ["a2a__a2a_offer", "llm__llm_generate"]},
               "principals": [{"name": "rover", "token": TOKEN}],
               "a2a": {"name": "offer-test", "orchestrator_url": orchestrator, "orchestrator_timeout": 10}}}
    try:
        async with gateway_with_a2a(raw, tmp_path) as gw, httpx2.AsyncClient(timeout=60) as http:
            headers = {"A2A-Version": "1.0", "Authorization": f"Bearer {TOKEN}"}
            body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                    "params": {"message": user_message({"text": "find me a coffee place"})}}
            r = await http.post(gw.base + "/a2a", json=body, headers=headers)
            task = r.json()["result"]["task"]
            assert task["status"]["state"] == "TASK_STATE_COMPLETED", task["status"]
            assert "degraded" in r.text and "unreachable" in r.text, r.text[:2000]
            for secret in ("hunter2", "orchestrator-api-key", f":{gone.getsockname()[1]}"):
                assert secret not in r.text, secret
    finally:
        gone.close()
