"""TLS when configured: https card URLs and wss, peers verified against a configured CA."""

from __future__ import annotations

import json
import ssl
import subprocess
from pathlib import Path

import httpx2
import pytest
from tests.a2a.a2a_rig import open_port, serve
from websockets.asyncio.client import connect

from sentinel_mcp.a2a.discovery import PeerRejected, verify_peer
from sentinel_mcp.a2a.settings import A2ASettings

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def cert(tmp_path: Path) -> tuple[str, str]:
    key, crt = tmp_path / "key.pem", tmp_path / "cert.pem"
    try:
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                        "-keyout", str(key), "-out", str(crt), "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    except FileNotFoundError:
        pytest.skip("openssl is not installed")
    return str(crt), str(key)


async def test_tls_card_says_https_and_wss_and_peers_verify_with_the_ca(cert):
    crt, key = cert
    settings = A2ASettings(name="tls-agent", tls_cert=crt, tls_key=key)
    async with open_port() as port, serve(port, settings) as srv:
        assert srv.base_url.startswith("https://")
        ctx = ssl.create_default_context(cafile=crt)
        async with httpx2.AsyncClient(verify=ctx, timeout=10) as http:
            card = (await http.get(srv.base_url + "/.well-known/agent-card.json")).json()
            assert card["supportedInterfaces"][0]["url"] == srv.base_url + "/a2a"
            assert card["supportedInterfaces"][1]["url"].startswith("wss://")
            port_no = int(srv.base_url.rsplit(":", 1)[1])
            peer = await verify_peer("tls", ["127.0.0.1"], port_no, {"path": "/.well-known/agent-card.json",
                                                                     "tls": "1"}, http)
            assert peer.rpc_url == srv.base_url + "/a2a"
        async with httpx2.AsyncClient(timeout=10) as untrusting:  # system CAs only: the card is not trusted
            with pytest.raises(PeerRejected, match="card fetch failed"):
                await verify_peer("tls", ["127.0.0.1"], port_no, {"tls": "1"}, untrusting)
        async with connect(
            card["supportedInterfaces"][1]["url"], ssl=ctx, subprotocols=["a2a.v1.json"]
        ) as ws:
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}))
            assert json.loads(await ws.recv())["error"]["code"] == -32001
