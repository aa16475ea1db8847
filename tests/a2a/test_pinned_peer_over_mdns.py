"""Two Sentinels over real mDNS on 127.0.0.1: B signs its card (``card_signing_key``), A pins B's name to B's
public key (``peer_keys``). A spoofer on the link announces a card under B's name, unsigned: A's browser and
its ``a2a_discover`` list B as signed and refuse the spoofer, so B's name reaches B alone."""

from __future__ import annotations

import asyncio
import socket
import uuid
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from mcp import Client
from tests.a2a.a2a_rig import LOOPBACK, multicast_problem, open_port, serve
from tests.a2a.card_server import serving_card
from tests.a2a.test_card_signatures import card_at, pem
from tests.a2a.test_own_card_signature import write_key

from sentinel_mcp.a2a.app import a2a_lifespan
from sentinel_mcp.a2a.discovery import SERVICE_TYPE, PeerRegistry, txt_record
from sentinel_mcp.a2a.peer_browser import open_zeroconf
from sentinel_mcp.a2a.mcp_tools import create_server
from sentinel_mcp.a2a.settings import A2ASettings
from sentinel_mcp.core.builtin import BuiltinContext

pytestmark = [pytest.mark.timeout(90),
              pytest.mark.skipif(multicast_problem() is not None, reason=str(multicast_problem()))]


async def test_a_spoofer_of_a_pinned_peers_name_is_refused_over_mdns(tmp_path: Path) -> None:
    from zeroconf.asyncio import AsyncServiceInfo

    tag = uuid.uuid4().hex[:8]
    b_key = ec.generate_private_key(ec.SECP256R1())
    b_name = f"sentinel-b-{tag}"
    b_set = A2ASettings(name=b_name, advertise=True, interfaces=LOOPBACK, allow_loopback_plaintext=True,
                        card_signing_key=write_key(tmp_path, b_key))
    a_section = {"name": f"sentinel-a-{tag}", "advertise": True, "interfaces": LOOPBACK,
                 "allow_loopback_plaintext": True, "peer_keys": {b_name: pem(b_key)}}
    a_set = A2ASettings(**a_section)
    a_peers = PeerRegistry()
    spoofer = open_zeroconf(LOOPBACK)
    async with serving_card(lambda port: card_at(port, b_name)) as spoof_port, \
            open_port() as port_b, serve(port_b, b_set) as b, open_port() as port_a, \
            serve(port_a, a_set, a_peers) as a, a2a_lifespan(b_set, b.base_url), \
            a2a_lifespan(a_set, a.base_url, a_peers):
        spoof_name = f"spoof-{tag}.{SERVICE_TYPE}"
        info = AsyncServiceInfo(SERVICE_TYPE, spoof_name, addresses=[socket.inet_aton("127.0.0.1")],
                                port=spoof_port, properties=txt_record(A2ASettings()),
                                server=f"spoof-{tag}.local.")
        await spoofer.async_register_service(info)
        try:
            loop = asyncio.get_running_loop()
            end = loop.time() + 20

            def settled() -> bool:
                b_found = any(p.card.name == b_name for p in a_peers.verified())
                return spoof_name in a_peers.rejected and b_found

            while loop.time() < end and not settled():
                await asyncio.sleep(0.1)
            assert "pinned to key" in a_peers.rejected.get(spoof_name, ""), a_peers.rejected
            found = a_peers.find(b_name)
            assert found is not None and found.rpc_url == b.rpc_url and found.trust.verified
            ctx = BuiltinContext(name="a2a", data_dir=tmp_path, settings=a_section,
                                 services={"a2a_peers": a_peers})
            async with Client(create_server(ctx)) as tools:
                listed = (await tools.call_tool("a2a_discover", {"timeout": 3})).structured_content
            assert any(p["name"] == b_name and p["signed"] for p in listed["peers"]), listed
            assert all(p["rpc_url"] != f"http://127.0.0.1:{spoof_port}/a2a" for p in listed["peers"]), listed
            assert "pinned to key" in listed["rejected"].get(spoof_name, ""), listed["rejected"]
        finally:
            await spoofer.async_unregister_service(info)
            await spoofer.async_close()
