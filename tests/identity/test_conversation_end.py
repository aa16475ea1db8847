"""A handshake-era session's conversation ends when its connection does, and stays ended: its sealed id (every
answer carries it in ``_meta["sentinel/session"]``) names nothing once the session is deleted, at once, and
is not brought back when the registry has since forgotten the conversation.

Before, the end came only when Python's collector freed the connection (seconds or minutes after a DELETE:
meanwhile any request of the caller naming the sealed id used the deleted session's facts and context), and
a conversation pushed out of the registry by 20,000 newer ones (anyone's) was restored from its sealed id as
if it had never ended, its facts with it.

A real Sentinel over HTTP (the bookings server), raw HTTP on 127.0.0.1; the registry's rule also alone."""

from __future__ import annotations

import asyncio

import json
from typing import Any

import httpx2
import pytest
from tests.identity.identity_rig import ALICE, http_sentinel, write_config

from sentinel_mcp.gateway.conversations import Conversations, SessionRefused
from sentinel_mcp.identity.principal import Principal

pytestmark = pytest.mark.timeout(120)

BASE = {"Authorization": f"Bearer {ALICE}", "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json"}
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "end", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}}


def _last(text: str) -> dict[str, Any]:
    """The last message of an event stream, or the one message of a JSON answer (the server may answer
    either)."""
    if text.lstrip().startswith("{"):
        return dict(json.loads(text))
    return dict([json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")][-1])


async def test_a_deleted_sessions_sealed_id_names_nothing_once_its_connection_closed(tmp_path):
    with http_sentinel(write_config(tmp_path)) as (base, _proc):
        url = f"{base}/mcp"
        async with httpx2.AsyncClient(timeout=30) as http:
            init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                               "clientInfo": {"name": "end", "version": "1"}}}
            opened = await http.post(url, json=init, headers=BASE)
            session = {**BASE, "Mcp-Session-Id": opened.headers["mcp-session-id"],
                       "Mcp-Protocol-Version": "2025-06-18"}
            initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            await http.post(url, json=initialized, headers=session)
            await http.post(url, headers=session, json={"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                            "params": {"name": "bk__list_bookings", "arguments": {"user_id": "u_123"}}})
            bound = await http.post(url, headers=session, json={
                "jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "sentinel__sentinel_bind",
                           "arguments": {"context": "booking_of_interest", "value": "BK-789"}}})
            sealed = _last(bound.text)["result"]["_meta"]["sentinel/session"]
            assert (await http.delete(url, headers=session)).status_code == 200
            modern = {**BASE, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
                      "Mcp-Name": "sentinel__sentinel_facts"}
            for _ in range(50):  # the connection closes just after DELETE is answered (bounded wait)
                named = await http.post(url, headers=modern, json={
                    "jsonrpc": "2.0", "id": 4, "method": "tools/call",
                    "params": {"name": "sentinel__sentinel_facts", "arguments": {},
                               "_meta": {**META, "sentinel/session": sealed}}})
                shown = named.json()["result"]["content"][0]["text"]
                if "unknown, ended or not yours" in shown:
                    break
                await asyncio.sleep(0.1)
            assert "BK-789" not in shown and "unknown, ended or not yours" in shown, shown


def test_an_ended_connections_conversation_is_not_restored_once_forgotten():
    registry = Conversations(capacity=3)
    alice = Principal(name="alice", kind="token")

    class Connection:  # a handshake connection (held weakly by the registry)
        pass

    connection, open_connection = Connection(), Connection()
    ended = registry.of_transport(connection, alice, "http")
    ended_id = registry.sealed(ended)
    live = registry.of_transport(open_connection, alice, "http")
    live_id = registry.sealed(live)
    lapsing = registry.open(alice, "conv")  # a 2026-era conversation: it never ends, it lapses
    lapsing_id = registry.sealed(lapsing)
    registry.end(ended.id)
    for _ in range(5):  # both pushed out of the registry
        registry.open(alice, "conv")
    with pytest.raises(SessionRefused):
        registry.named(ended_id, alice)
    assert registry.named(lapsing_id, alice).id == lapsing.id
    assert registry.named(live_id, alice) is live  # an open connection's is still named, however many came
    registry.end(live.id)
    with pytest.raises(SessionRefused):
        registry.named(live_id, alice)
    # another replica (the cluster's seal) restores a handshake-era conversation it never held: a retry there
    # joins the same conversation (tests/cluster/test_console_retry_joins.py)
    replica = Conversations(capacity=3)
    replica.seal = registry.seal
    other = registry.of_transport(Connection(), alice, "http")
    assert replica.named(registry.sealed(other), alice).id == other.id
    # and the ended ones this registry remembers are bounded (twice its capacity), the oldest forgotten first
    for n in range(10):
        registry.end(f"alice/http-{n}")
    assert len(registry._ended) == 6 and "alice/http-9" in registry._ended
