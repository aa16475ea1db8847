"""A peer's task or message is read as A2A's JSON mapping (ProtoJSON) says, as its card is: a field left
out, or null, is its default (no artifacts, no history, no parts, TASK_STATE_UNSPECIFIED), and a field present
is of its type, strictly. Before, a wrong type was read as whatever it resembled: ``artifacts`` as an object
crashed an offer (a TypeError), parts that were a string or an object were dropped without a word and the task
relayed as completed, a state that was a number read as "unknown".

A real a2a-sdk server (``A2A_SDK_PYTHON``) for the SDK's own answers; hostile answers from an agent over real
HTTP on 127.0.0.1.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from tests.a2a.test_card_signatures import card_at
from tests.a2a.test_peer_cannot_route import recording_agent
from tests.a2a.test_sdk_interop import start_sdk_server
from tests.a2a.test_unverified_send import peer as unverified_peer

from sentinel_mcp.a2a.discovery import PeerRegistry
from sentinel_mcp.a2a.mcp_tools import create_server
from sentinel_mcp.a2a.orchestrator import offer
from sentinel_mcp.a2a.settings import A2ASettings
from sentinel_mcp.core.builtin import BuiltinContext

pytestmark = pytest.mark.timeout(120)

DONE = {"state": "TASK_STATE_COMPLETED"}
TEXT = {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "fine"}]}

# present, of the wrong type: the answer is not an A2A task
HOSTILE: list[dict[str, Any]] = [
    {"status": []}, {"status": "TASK_STATE_COMPLETED"}, {"status": {"state": 5}},
    {"status": {"state": ["TASK_STATE_COMPLETED"]}}, {"status": {**DONE, "message": "fine"}},
    {"status": {**DONE, "message": {**TEXT, "parts": {"text": "fine"}}}},
    {"status": {**DONE, "message": {**TEXT, "parts": "fine"}}},
    {"status": {**DONE, "message": {**TEXT, "parts": [{"text": 5}]}}},
    {"status": {**DONE, "message": {**TEXT, "parts": ["fine"]}}},
    {"status": DONE, "artifacts": {"parts": [{"text": "x"}]}}, {"status": DONE, "artifacts": "abc"},
    {"status": DONE, "artifacts": [{"artifactId": "a", "parts": "x"}]},
    {"status": DONE, "artifacts": [{"artifactId": "a", "parts": [{"text": ["x"]}]}]},
    {"status": DONE, "artifacts": [{"artifactId": 1, "parts": [{"text": "x"}]}]},
    {"status": DONE, "history": "x"}, {"status": DONE, "history": [{"parts": 1}]},
    {"status": DONE, "id": 7},
]

# left out or null: defaults
DEFAULTED: list[tuple[dict[str, Any], str]] = [
    ({"status": DONE}, "TASK_STATE_COMPLETED"),
    ({"status": DONE, "artifacts": None, "history": None}, "TASK_STATE_COMPLETED"),
    ({"status": {**DONE, "message": {"messageId": "m", "role": "ROLE_AGENT"}}}, "TASK_STATE_COMPLETED"),
    ({"status": {**DONE, "message": None}, "artifacts": [{"artifactId": "a"}]}, "TASK_STATE_COMPLETED"),
    ({"status": {}}, "TASK_STATE_UNSPECIFIED"),
]


def THEM(port: int) -> dict[str, Any]:
    """The card the agent serves: "them" at its port (unsigned: a direct call, with no guard, relays)."""
    return card_at(port, "them")


def tools_for(tmp_path: Path, port: int, listed: bool = False) -> Client:
    """``listed``: the agent stands in the registry as an announced peer (for a2a_send), else it is a bridge
    target (for a2a_relay: its agent serves a card named "them", fetched and checked before each relay)."""
    registry = PeerRegistry()
    if listed:
        registry.peers["them._a2a._tcp.local."] = unverified_peer("them", port)
    target = {"bridge_targets": {"them": f"http://127.0.0.1:{port}/a2a"}, "allow_loopback_plaintext": True}
    ctx = BuiltinContext(name="a2a", data_dir=tmp_path, settings={} if listed else target,
                         services={"a2a_peers": registry})
    return Client(create_server(ctx))


async def test_the_sdks_own_answer_is_relayed(tmp_path: Path) -> None:
    proc, port = await start_sdk_server(env={"SDK_BARE_CARD": "1", "SDK_AGENT_NAME": "them"})
    try:
        async with tools_for(tmp_path, port) as tools:
            got = await tools.call_tool("a2a_relay", {"target": "them", "text": "hi", "context_id": "c-1"})
        relayed = got.structured_content
        assert relayed["state"] == "TASK_STATE_COMPLETED", relayed  # type: ignore[index]
        assert relayed["texts"] == ["sdk agent got 1 part(s)"], relayed  # type: ignore[index]
    finally:
        proc.terminate()
        await proc.wait()


@pytest.mark.parametrize("answer", HOSTILE, ids=repr)
async def test_a_relayed_answer_of_the_wrong_type_is_invalid(tmp_path: Path, answer: dict[str, Any]) -> None:
    async with recording_agent(lambda _m: answer, THEM) as (port, _got):
        async with tools_for(tmp_path, port) as tools:
            got = await tools.call_tool("a2a_relay", {"target": "them", "text": "hi", "context_id": "c-1"})
    relayed = got.structured_content
    assert relayed["state"] == "invalid" and relayed["texts"] == [], relayed  # type: ignore[index]


@pytest.mark.parametrize("answer", HOSTILE, ids=repr)
async def test_an_a2a_send_answer_of_the_wrong_type_is_a_failure(tmp_path: Path,
                                                                 answer: dict[str, Any]) -> None:
    """a2a_send shows the model the peer's answer in its own shape: only when it is an A2A task or message."""
    async with recording_agent(lambda _m: answer, THEM) as (port, _got):
        async with tools_for(tmp_path, port, listed=True) as tools:
            sent = await tools.call_tool("a2a_send", {"peer": "them", "text": "hi"})
    shown = " ".join(getattr(c, "text", "") for c in sent.content)
    assert sent.is_error and "not an A2A" in shown, shown


@pytest.mark.parametrize("answer, state", DEFAULTED, ids=repr)
async def test_a_relayed_answer_with_defaults_left_out_is_read(tmp_path: Path, answer: dict[str, Any],
                                                               state: str) -> None:
    async with recording_agent(lambda _m: answer, THEM) as (port, _got):
        async with tools_for(tmp_path, port) as tools:
            got = await tools.call_tool("a2a_relay", {"target": "them", "text": "hi", "context_id": "c-1"})
    assert got.structured_content["state"] == state, got.structured_content  # type: ignore[index]


@pytest.mark.parametrize("answer", HOSTILE, ids=repr)
async def test_an_orchestrators_answer_of_the_wrong_type_is_a_decline(answer: dict[str, Any]) -> None:
    async with recording_agent(lambda _m: answer, THEM) as (port, _got):
        rpc = f"http://127.0.0.1:{port}/a2a"
        settings = A2ASettings(orchestrator_url=rpc, orchestrator_timeout=5)
        out = await offer(settings, rpc, "find coffee", "i-1", [])
    assert out.taken is False and "not usable" in out.reason, out


async def test_an_orchestrators_answer_with_defaults_left_out_is_read() -> None:
    answer = {"status": DONE, "artifacts": [{"artifactId": "a", "parts": [{"text": "done"}]}],
              "history": None}
    async with recording_agent(lambda _m: answer, THEM) as (port, _got):
        rpc = f"http://127.0.0.1:{port}/a2a"
        settings = A2ASettings(orchestrator_url=rpc, orchestrator_timeout=5)
        out = await offer(settings, rpc, "find coffee", "i-1", [])
    assert out.taken is True and out.artifacts[0]["parts"] == [{"text": "done"}], out
