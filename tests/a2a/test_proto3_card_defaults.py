"""Cards are read as A2A's JSON mapping (ProtoJSON) says: a field left out, or null, is its default (an empty
list, false, "", an empty message), because proto3 JSON writers leave defaults out; a2a-sdk writes a card with
no skills without ``skills`` at all, and Sentinel refused such a real SDK peer as "not an A2A AgentCard".
Present fields are typed strictly: a list that is a string or an object, a boolean that is "yes" or 1, an
object that is a list, is refused (lax parsing read "yes" as true).

A real a2a-sdk server (``A2A_SDK_PYTHON``) in a subprocess; hostile cards over real HTTP on 127.0.0.1.
"""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
from tests.a2a.card_server import serving_card
from tests.a2a.test_sdk_interop import start_sdk_server

from sentinel_mcp.a2a.discovery import PeerRejected, txt_record, verify_peer
from sentinel_mcp.a2a.peer_client import build_message, send_message
from sentinel_mcp.a2a.settings import A2ASettings

pytestmark = pytest.mark.timeout(120)


async def _verify(port: int) -> Any:
    async with httpx2.AsyncClient(timeout=5) as http:
        return await verify_peer("p", ["127.0.0.1"], port, txt_record(A2ASettings()), http,
                                 allow_loopback_plaintext=True)


async def test_a_real_sdk_peer_with_no_skills_is_verified_and_called() -> None:
    proc, port = await start_sdk_server(env={"SDK_BARE_CARD": "1", "SDK_AGENT_NAME": "bare-sdk-agent"})
    try:
        async with httpx2.AsyncClient(timeout=5) as http:
            raw = (await http.get(f"http://127.0.0.1:{port}/.well-known/agent-card.json")).json()
        # what the SDK writes: no skills, modes, description or version at all
        assert not {"skills", "defaultInputModes", "defaultOutputModes", "description", "version"} & set(raw)
        peer = await _verify(port)
        assert peer.card.name == "bare-sdk-agent"
        assert peer.card.skills == [] and peer.card.default_input_modes == [] and peer.card.description == ""
        assert peer.summary()["skills"] == []
        reply = await send_message(peer.rpc_url, build_message(text="hello"))
        assert reply["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    finally:
        proc.terminate()
        await proc.wait()


def _card(port: int, **fields: Any) -> dict[str, Any]:
    card: dict[str, Any] = {
        "name": "plain-peer", "capabilities": {},
        "supportedInterfaces": [{"url": f"http://127.0.0.1:{port}/a2a", "protocolBinding": "JSONRPC",
                                 "protocolVersion": "1.0"}]}
    for k, v in fields.items():
        if v is _DROP:
            card.pop(k, None)
        else:
            card[k] = v
    return card


class _Dropped:
    """A field left out of the card (a stable repr: xdist's workers must collect the same test ids)."""

    def __repr__(self) -> str:
        return "<left out>"


_DROP = _Dropped()

# each left out, or null, reads as its default
DEFAULTED = [
    {}, {"capabilities": _DROP}, {"skills": None}, {"skills": []}, {"defaultInputModes": None},
    {"description": None, "version": None}, {"capabilities": None},
    {"capabilities": {"extensions": None, "streaming": None}},
    {"skills": [{"id": "s"}]},  # a skill's name, description and tags left out
    {"skills": [{"id": "s", "name": "s", "description": "d", "tags": None, "examples": None}]},
    {"securitySchemes": None, "securityRequirements": None, "signatures": None},
    {"capabilities": {"extensions": [{"uri": "urn:x"}]}},
]

# present, of the wrong type
HOSTILE = [
    {"skills": "echo"}, {"skills": {"id": "s"}}, {"skills": 1}, {"skills": True}, {"skills": ["echo"]},
    {"skills": [{"id": "s", "tags": "t"}]}, {"skills": [{"id": 1}]}, {"skills": [None]},
    {"defaultInputModes": "text/plain"}, {"defaultOutputModes": [1]}, {"defaultInputModes": {"a": 1}},
    {"capabilities": []}, {"capabilities": "streaming"}, {"capabilities": {"streaming": "yes"}},
    {"capabilities": {"streaming": 1}}, {"capabilities": {"pushNotifications": "false"}},
    {"capabilities": {"extensions": {"uri": "urn:x"}}}, {"capabilities": {"extensions": ["urn:x"]}},
    {"capabilities": {"extensions": [{"uri": "urn:x", "required": "true"}]}},
    {"securitySchemes": []}, {"securitySchemes": {"k": "bearer"}}, {"securityRequirements": {"k": []}},
    {"supportedInterfaces": {"url": "x"}}, {"supportedInterfaces": "http://127.0.0.1/a2a"},
    {"supportedInterfaces": _DROP}, {"supportedInterfaces": []}, {"supportedInterfaces": None},
    {"name": 7}, {"name": ["plain-peer"]}, {"name": None}, {"name": _DROP}, {"description": 5},
    {"version": 1.0}, {"signatures": {"protected": "x"}}, {"provider": []}, {"iconUrl": 3},
]


@pytest.mark.parametrize("fields", DEFAULTED, ids=repr)
async def test_left_out_or_null_fields_read_as_their_defaults(fields: dict[str, Any]) -> None:
    async with serving_card(lambda port: _card(port, **fields)) as port:
        peer = await _verify(port)
    assert peer.card.name == "plain-peer"


@pytest.mark.parametrize("fields", HOSTILE, ids=repr)
async def test_fields_of_the_wrong_type_are_refused(fields: dict[str, Any]) -> None:
    async with serving_card(lambda port: _card(port, **fields)) as port:
        with pytest.raises(PeerRejected):
            await _verify(port)
