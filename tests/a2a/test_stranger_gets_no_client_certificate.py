"""``a2a_send`` and ``a2a_relay`` to a peer whose card no configured key verified (sent once the user said
yes) show it no client certificate: ``peer_tls``'s certificate goes out in the handshake before a pin is
checked and, under TLS 1.2, in the clear, so a stranger on the LAN that announced itself and asked for one got
Sentinel's identity (the card fetch already left it out: ``announced_card_client.py``). The owner's listed
peers and verified ones still get it. Real TLS with a local CA, a real listener on 127.0.0.1 that notes
whether a certificate came; the tools run in their real MCP server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client
from tests.a2a.test_announced_fetch_tells_little import Asking, _server_context, _serving
from tests.a2a.test_card_signatures import card_at

from sentinel_mcp.a2a.discovery import Peer, PeerRegistry
from sentinel_mcp.a2a.mcp_tools import create_server
from sentinel_mcp.a2a.protocol import AgentCard
from sentinel_mcp.core.builtin import BuiltinContext
from sentinel_mcp.tls.authority import LocalCA

pytestmark = pytest.mark.timeout(60)

_TASK = {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_COMPLETED"}}


def _answer() -> bytes:
    body = json.dumps({"jsonrpc": "2.0", "id": "1", "result": {"task": _TASK}}).encode()
    return (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
            + str(len(body)).encode() + b"\r\nconnection: close\r\n\r\n" + body)


@pytest.mark.parametrize("tool", ["a2a_send", "a2a_relay"])
async def test_an_unverified_peer_is_shown_no_client_certificate(tmp_path: Path, tool: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    ca = LocalCA(tmp_path / "ca")
    ca.create()
    me = ca.issue_client("sentinel-a")
    asking = Asking(_server_context(ca)[0], _answer())
    server = await _serving(asking)
    try:
        base = f"https://127.0.0.1:{asking.port}"
        stranger = Peer(instance="stranger._a2a._tcp.local.", base_url=base,
                        card_url=base + "/.well-known/agent-card.json",
                        card=AgentCard.model_validate(card_at(asking.port, "stranger")),
                        rpc_url=base + "/a2a", txt={})  # its trust: UNSIGNED
        assert not stranger.trust.verified
        registry = PeerRegistry()
        registry.peers[stranger.instance] = stranger
        # the system's store (here made to hold the local CA, as a public one would hold any site's issuer):
        # any certificate it knows passes, so the handshake proves nothing of whom the owner meant
        monkeypatch.setenv("SSL_CERT_FILE", str(ca.ca_cert_path))
        settings = {"peer_tls": {"cert": str(me.cert), "key": str(me.key)}}
        ctx = BuiltinContext(name="a2a", data_dir=tmp_path, settings=settings,
                             services={"a2a_peers": registry})
        args = ({"peer": stranger.instance, "text": "hello"} if tool == "a2a_send"
                else {"target": stranger.instance, "text": "hello", "context_id": "c-1"})
        async with Client(create_server(ctx)) as tools:
            sent = await tools.call_tool(tool, args)
        assert not sent.is_error, sent
        assert asking.shown == [False], asking.shown  # reached (its chain checks out), no certificate shown
        # with the owner's own CA the handshake proves the server by it before the certificate goes: shown
        settings = {"peer_tls": {"ca": str(ca.ca_cert_path), "cert": str(me.cert), "key": str(me.key)}}
        own_ca = BuiltinContext(name="a2a", data_dir=tmp_path, settings=settings,
                                services={"a2a_peers": registry})
        async with Client(create_server(own_ca)) as tools:
            assert not (await tools.call_tool(tool, args)).is_error
        assert asking.shown == [False, True], asking.shown
        # the control: the same client settings, used where the owner listed the peer, show it
        import httpx2
        from sentinel_mcp.tls.client_context import httpx_verify
        from sentinel_mcp.tls.settings import ClientTLS

        tls = ClientTLS(ca=str(ca.ca_cert_path), cert=str(me.cert), key=str(me.key))
        async with httpx2.AsyncClient(verify=httpx_verify(tls)) as http:
            await http.get(base + "/")
        assert asking.shown == [False, True, True], asking.shown
    finally:
        server.close()
