"""A2A peers are trusted for their certificates, never for answering on the local network: a peer found over
mDNS counts only if its card came over TLS from a server whose certificate chains to the configured CA, names
the advertised address and matches the pins; Sentinel shows its own client certificate to peers that ask."""

from __future__ import annotations

import asyncio
import socket
import uuid

import httpx2
import pytest
import uvicorn
from mcp import Client
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route
from tests.a2a.a2a_rig import LOOPBACK, multicast_problem, open_port, serve  # noqa: E402
from tests.a2a.one_shot_discovery import discover_until, verified_names  # noqa: E402

from sentinel_mcp.a2a.app import a2a_lifespan  # noqa: E402
from sentinel_mcp.a2a.discovery import PeerRegistry, PeerRejected, txt_record, verify_peer  # noqa: E402
from sentinel_mcp.a2a.mcp_tools import create_server  # noqa: E402
from sentinel_mcp.a2a.settings import A2ASettings  # noqa: E402
from sentinel_mcp.core.builtin import BuiltinContext  # noqa: E402
from sentinel_mcp.identity.certificates import CertificateResolver  # noqa: E402
from sentinel_mcp.identity.principal import Principal  # noqa: E402
from sentinel_mcp.identity.resolver import Authenticator  # noqa: E402
from sentinel_mcp.tls.authority import machine_addresses  # noqa: E402
from sentinel_mcp.tls.client_context import httpx_verify  # noqa: E402
from sentinel_mcp.tls.server_context import FrontTLS  # noqa: E402
from sentinel_mcp.tls.settings import CertificateMatch, ClientTLS  # noqa: E402

pytestmark = pytest.mark.timeout(90)
TLS_TXT = {**txt_record(A2ASettings()), "tls": "1"}


def lan_address() -> str | None:
    return next((a for a in machine_addresses() if "." in a and not a.startswith("127.")), None)


async def test_a_peer_counts_for_its_certificate(pki):
    good = FrontTLS(pki.server.cert, pki.server.key)
    async with open_port() as port, serve(port, A2ASettings(name="tls-peer"), tls=good) as srv:
        port_no = int(srv.base_url.rsplit(":", 1)[1])
        trusting = ClientTLS(ca=str(pki.ca.ca_cert_path), pin_sha256=[pki.server.sha256])
        async with httpx2.AsyncClient(timeout=5, verify=httpx_verify(trusting)) as http:
            peer = await verify_peer("p", ["127.0.0.1"], port_no, TLS_TXT, http)
            assert peer.rpc_url == srv.rpc_url and peer.rpc_url.startswith("https://")
        for bad, why in ((ClientTLS(ca=str(pki.other_ca.ca_cert_path)), "certificate verify failed"),
                         (None, "certificate verify failed"),  # the system's store does not know this CA
                         (trusting.model_copy(update={"pin_sha256": ["cd" * 32]}), "pin mismatch")):
            async with httpx2.AsyncClient(timeout=5, verify=httpx_verify(bad)) as http:
                with pytest.raises(PeerRejected, match=why):
                    await verify_peer("p", ["127.0.0.1"], port_no, TLS_TXT, http)


async def test_answering_on_the_local_network_proves_nothing():
    """A plaintext agent on this machine's LAN address serves a perfect card naming itself: not trusted."""
    lan = lan_address()
    if lan is None:
        pytest.skip("this machine has no non-loopback IPv4 address")

    async def card(request):  # type: ignore[no-untyped-def]
        return JSONResponse({
            "name": "lan-agent", "description": "d", "version": "1", "capabilities": {},
            "supportedInterfaces": [{"url": f"http://{lan}:{port}/a2a", "protocolBinding": "JSONRPC",
                                     "protocolVersion": "1.0"}],
            "defaultInputModes": [], "defaultOutputModes": [], "skills": []})

    sock = socket.socket()
    sock.bind((lan, 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(Starlette(routes=[Route("/.well-known/agent-card.json", card)]),
                                           log_level="warning", lifespan="off"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        async with httpx2.AsyncClient(timeout=5) as http:
            assert (await http.get(f"http://{lan}:{port}/.well-known/agent-card.json")).status_code == 200
            link = A2ASettings(interfaces=[lan]).card_networks  # (browsing there: its link is allowed)
            with pytest.raises(PeerRejected, match="advertises plaintext"):
                await verify_peer("lan", [lan], port, txt_record(A2ASettings()), http, networks=link)
            with pytest.raises(PeerRejected, match="card fetch failed"):  # and it cannot speak TLS either
                await verify_peer("lan", [lan], port, TLS_TXT, http, networks=link)
    finally:
        server.should_exit = True
        await task
        sock.close()


async def test_mdns_peers_with_bad_certificates_are_not_trusted_and_good_ones_get_our_certificate(
    tmp_path, pki
):
    reason = multicast_problem()
    if reason:
        pytest.skip(reason)
    tag = uuid.uuid4().hex[:8]
    stranger_cert = pki.other_ca.issue_server(["localhost"], ["127.0.0.1"])
    me = pki.ca.issue_client("sentinel-a")
    # the good peer asks for client certificates and knows ours
    rules = [(CertificateMatch(subject="CN=sentinel-a,O=Sentinel"), Principal("sentinel-a", "certificate"))]
    good_tls = FrontTLS(pki.server.cert, pki.server.key, pki.ca.ca_cert_path, pki.ca.crl_path, "required")
    bad_tls = FrontTLS(stranger_cert.cert, stranger_cert.key)
    good_set = A2ASettings(name=f"good-{tag}", advertise=True, interfaces=LOOPBACK)
    bad_set = A2ASettings(name=f"bad-{tag}", advertise=True, interfaces=LOOPBACK)
    peer_tls = {"ca": str(pki.ca.ca_cert_path), "cert": str(me.cert), "key": str(me.key)}
    async with (
        open_port() as gp,
        serve(
            gp, good_set, tls=good_tls, auth=Authenticator([CertificateResolver(rules, "required")])
        ) as good,
        open_port() as bp,
        serve(bp, bad_set, tls=bad_tls) as bad,
        a2a_lifespan(good.settings, good.base_url),
        a2a_lifespan(bad.settings, bad.base_url),
    ):
        assert good.settings.tls and bad.settings.tls  # both advertise tls=1

        def both_checked(r: PeerRegistry) -> bool:
            refused = r.rejections(owner=True)
            return good_set.name in verified_names(r) and any(k.startswith(bad_set.name) for k in refused)

        registry = await discover_until(both_checked, tls=ClientTLS(**peer_tls))
        names = verified_names(registry)
        assert good_set.name in names and bad_set.name not in names, registry.rejected
        # why, for the owner (a model is told only that no card came: test_announced_fetch_tells_little)
        why = next(v for k, v in registry.rejections(owner=True).items() if k.startswith(bad_set.name))
        assert "certificate verify failed" in why
        # the LLM-facing tool sends to the verified peer, showing our client certificate
        ctx = BuiltinContext(
            name="a2a",
            data_dir=tmp_path,
            settings={"interfaces": LOOPBACK, "peer_tls": peer_tls},
            services={"a2a_peers": registry},
        )
        async with Client(create_server(ctx)) as tools:
            sent = await tools.call_tool(
                "a2a_send",
                {
                    "peer": good_set.name,
                    "data": {
                        "type": "tool_call",
                        "tool_call_id": "t",
                        "name": "tools__echo",
                        "args": {"text": "hi"},
                    },
                },
            )
            assert not sent.is_error, sent.content
            assert sent.structured_content["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        assert gp.calls[-1].client == "sentinel-a"  # the peer knew us by our certificate
        # without our certificate the same peer refuses us
        ctx = BuiltinContext(
            name="a2a",
            data_dir=tmp_path,
            settings={"peer_tls": {"ca": peer_tls["ca"]}},
            services={"a2a_peers": registry},
        )
        async with Client(create_server(ctx)) as tools:
            refused = await tools.call_tool("a2a_send", {"peer": good_set.name, "text": "hi"})
            assert refused.is_error and "CERTIFICATE_REQUIRED" in refused.content[0].text.upper().replace(
                " ", "_"
            )
