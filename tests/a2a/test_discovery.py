"""mDNS on 127.0.0.1: two advertisers find each other and verify cards; card checks refuse liars.

Real zeroconf bound to 127.0.0.1 (nothing is announced on the LAN); unique instance names per test.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import uuid

import httpx2
import pytest
from tests.a2a.a2a_rig import LOOPBACK, multicast_problem, open_port, serve
from tests.a2a.one_shot_discovery import ROUNDS, discover_until, verified_names
from mcp import Client
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from sentinel_mcp.a2a.app import a2a_lifespan
from sentinel_mcp.a2a.discovery import PeerRegistry, PeerRejected, txt_record, verify_peer
from sentinel_mcp.a2a.mcp_tools import create_server
from sentinel_mcp.a2a.settings import A2ASettings
from sentinel_mcp.core.builtin import BuiltinContext

pytestmark = pytest.mark.timeout(60)


def _degraded_unless_a_peer_is_listed(service, peers) -> None:
    """The card says "degraded" exactly while no peer is listed (its own server never is). Another worker's
    Sentinel on loopback may be listed meanwhile, so the status is judged against the peers around it."""
    before = bool(peers.verified())
    degraded = service.status()["degraded"]
    after = bool(peers.verified())
    if before == after:
        assert degraded is (not before)


async def _wait_for(cond, timeout: float = 15.0) -> bool:  # type: ignore[no-untyped-def]
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        if cond():
            return True
        await asyncio.sleep(0.1)
    return False


async def test_two_sentinels_find_each_other_and_read_location_at_minimal_scope():
    reason = multicast_problem()
    if reason:
        pytest.skip(reason)
    tag = uuid.uuid4().hex[:8]
    a_set = A2ASettings(name=f"sentinel-a-{tag}", advertise=True, interfaces=LOOPBACK,
                        allow_loopback_plaintext=True)
    b_set = A2ASettings(name=f"sentinel-b-{tag}", advertise=True, interfaces=LOOPBACK,
                        allow_loopback_plaintext=True)
    a_peers, b_peers = PeerRegistry(), PeerRegistry()
    async with open_port() as port_a, serve(port_a, a_set, a_peers) as a, \
            open_port() as port_b, serve(port_b, b_set, b_peers) as b, \
            a2a_lifespan(a_set, a.base_url, a_peers), a2a_lifespan(b_set, b.base_url, b_peers):
        found = await _wait_for(lambda: any(p.card.name == b_set.name for p in a_peers.verified())
                                and any(p.card.name == a_set.name for p in b_peers.verified()))
        assert found, (a_peers.rejected, b_peers.rejected)
        peer_b = next(p for p in a_peers.verified() if p.card.name == b_set.name)
        assert peer_b.rpc_url == b.rpc_url and peer_b.txt["path"] == "/.well-known/agent-card.json"
        assert peer_b.txt["v"] == "1.0" and peer_b.txt["proto"] == "jsonrpc"
        assert all(p.card.name != a_set.name for p in a_peers.verified())  # never itself
        # with a verified peer, A is no longer in degraded mode
        assert a.service.status()["degraded"] is False and a_peers.verified()
        # A's LLM-facing tool sends a sensor_request to B through the a2a_send tool
        ctx = BuiltinContext(name="a2a", data_dir=None,  # type: ignore[arg-type]
                             settings={"interfaces": LOOPBACK, "allow_loopback_plaintext": True},
                             services={"a2a_peers": a_peers})
        async with Client(create_server(ctx)) as tools:
            result = await tools.call_tool(
                "a2a_send",
                {
                    "peer": b_set.name,
                    "data": {
                        "type": "sensor_request",
                        "sensor": "location",
                        "scope": "minimal",
                        "policy_tag": "peer-test",
                    },
                },
            )
            unknown = await tools.call_tool("a2a_send", {"peer": "nobody", "text": "hi"})
            assert unknown.is_error and "a2a_discover" in unknown.content[0].text
        task = result.structured_content["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        reading = task["artifacts"][0]["parts"][0]["data"]["artifacts"][0]["content"]
        assert reading["payload"] == {"latitude": 38, "longitude": -122}
        assert reading["redactions"] == ["Rounded to city-level precision", "Removed altitude"]
        assert port_b.calls[-1].client == "peer:127.0.0.1" and port_b.calls[-1].origin == "a2a"


async def test_discover_peers_one_shot_lists_a_verified_agent():
    reason = multicast_problem()
    if reason:
        pytest.skip(reason)
    settings = A2ASettings(name=f"sentinel-solo-{uuid.uuid4().hex[:8]}", advertise=True, interfaces=LOOPBACK,
                        allow_loopback_plaintext=True)
    async with open_port() as port, serve(port, settings) as srv, a2a_lifespan(settings, srv.base_url):
        registry = await discover_until(lambda r: settings.name in verified_names(r),
                                        allow_loopback_plaintext=True)
        assert settings.name in verified_names(registry), registry.rejected
        # the CLI lists it too (asked again, bounded, as its browse may end before our name's turn)
        for _ in range(ROUNDS):
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "sentinel_mcp",
                "a2a",
                "discover",
                "--timeout",
                "2",
                "--json",
                "--allow-loopback-plaintext",
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            out, err = await proc.communicate()
            assert proc.returncode == 0, err.decode()
            listed = json.loads(out)
            if any(p["name"] == settings.name for p in listed["peers"]):
                break
        assert any(p["name"] == settings.name and p["rpc_url"] == srv.rpc_url for p in listed["peers"]), (
            listed
        )


@pytest.fixture
async def liar() -> str:
    """A server whose card names another host/port than where it is reached."""

    async def card(request):  # type: ignore[no-untyped-def]
        if request.url.path.startswith("/broken/"):
            return JSONResponse({"name": "no"})
        return JSONResponse(
            {
                "name": "liar",
                "description": "d",
                "version": "1",
                "capabilities": {},
                "supportedInterfaces": [
                    {"url": "http://10.9.9.9:1/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
                ],
                "defaultInputModes": [],
                "defaultOutputModes": [],
                "skills": [],
            }
        )

    import uvicorn

    app = Starlette(routes=[Route("/.well-known/agent-card.json", card),
                            Route("/broken/agent-card.json", card)])
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    yield sock.getsockname()[1]
    server.should_exit = True
    await task


async def test_verify_peer_refuses_cards_that_do_not_check_out(liar, rig):
    txt = txt_record(A2ASettings())
    async with httpx2.AsyncClient(timeout=5) as http:
        with pytest.raises(PeerRejected, match="names none of the advertised"):
            await verify_peer("liar", ["127.0.0.1"], liar, txt, http, allow_loopback_plaintext=True)
        with pytest.raises(PeerRejected, match="not an A2A AgentCard"):
            await verify_peer("broken", ["127.0.0.1"], liar, {**txt, "path": "/broken/agent-card.json"}, http,
                              allow_loopback_plaintext=True)
        with pytest.raises(PeerRejected, match="bad card path"):
            await verify_peer("evil", ["127.0.0.1"], liar, {**txt, "path": "http://elsewhere/"}, http)
        with pytest.raises(PeerRejected, match="card fetch"):
            # nothing listens on port 1
            await verify_peer("gone", ["127.0.0.1"], 1, txt, http, allow_loopback_plaintext=True)
        port = int(rig.base_url.rsplit(":", 1)[1])
        peer = await verify_peer("ok", ["127.0.0.1"], port, txt, http, allow_loopback_plaintext=True)
        assert peer.rpc_url == rig.rpc_url and peer.card.name == "sentinel-test"


async def test_a2a_send_to_a_peer_that_disappeared_is_a_clear_tool_error(tmp_path):
    registry = PeerRegistry()
    async with open_port() as port, serve(port, A2ASettings(name="vanishing")) as srv:
        async with httpx2.AsyncClient(timeout=5) as http:
            port_no = int(srv.base_url.rsplit(":", 1)[1])
            peer = await verify_peer(
                "vanishing._a2a._tcp.local.", ["127.0.0.1"], port_no, txt_record(A2ASettings()), http,
                allow_loopback_plaintext=True,
            )
        registry.peers[peer.instance] = peer
        ctx = BuiltinContext(name="a2a", data_dir=tmp_path, settings={}, services={"a2a_peers": registry})
        async with Client(create_server(ctx)) as tools:
            ok = await tools.call_tool("a2a_send", {"peer": "vanishing", "text": "hello"})
            assert ok.structured_content["task"]["status"]["state"] == "TASK_STATE_REJECTED"  # no LLM there
            bad = await tools.call_tool("a2a_send", {"peer": "vanishing", "data": {"type": "teleport"}})
            assert bad.is_error and "-32602" in bad.content[0].text
    async with Client(create_server(ctx)) as tools:  # the peer's server is gone now
        gone = await tools.call_tool("a2a_send", {"peer": "vanishing", "text": "still there?"})
        assert gone.is_error and "unreachable" in gone.content[0].text


def test_a_name_two_verified_peers_carry_names_neither():
    """A card names itself: a second agent announcing the first's name (zeroconf renames its instance) must
    not get what was meant for the first. By that name neither is found (``ambiguous`` lists both); each is
    still found by its instance or URL."""
    from types import SimpleNamespace

    from sentinel_mcp.a2a.discovery import Peer

    registry = PeerRegistry()
    for instance, port in (("home-hub._a2a._tcp.local.", 8001), ("home-hub-2._a2a._tcp.local.", 8002)):
        base = f"http://127.0.0.1:{port}"
        registry.peers[instance] = Peer(instance, base, base + "/.well-known/agent-card.json",
                                        SimpleNamespace(name="home-hub"), base + "/a2a", {})  # type: ignore[arg-type]
    assert registry.find("home-hub") is None
    assert registry.ambiguous("home-hub") == ["home-hub-2._a2a._tcp.local.", "home-hub._a2a._tcp.local."]
    assert registry.find("home-hub-2._a2a._tcp.local.").base_url.endswith(":8002")
    assert registry.find("http://127.0.0.1:8001/a2a").instance == "home-hub._a2a._tcp.local."
    del registry.peers["home-hub-2._a2a._tcp.local."]
    assert registry.find("home-hub").base_url.endswith(":8001") and registry.ambiguous("home-hub") == []


async def test_an_agent_squatting_sentinels_name_does_not_make_sentinel_its_own_peer(tmp_path):
    """Another agent announces Sentinel's own instance name first: zeroconf renames Sentinel's announcement
    ("name (2)"). The browser excluded the name it registered, but a2a_discover excluded only the configured
    name, so it verified Sentinel's renamed announcement, its own card, and merged it into the shared
    registry: Sentinel listed itself as a peer, counted itself out of degraded mode, and a2a_send by its own
    name reached itself. Sentinel knows itself by the name it holds, whatever it is."""
    reason = multicast_problem()
    if reason:
        pytest.skip(reason)
    from zeroconf.asyncio import AsyncServiceInfo

    from sentinel_mcp.a2a.discovery import instance_name, SERVICE_TYPE
    from sentinel_mcp.a2a.peer_browser import open_zeroconf

    name = f"sentinel-own-{uuid.uuid4().hex[:8]}"
    settings = A2ASettings(name=name, advertise=True, interfaces=LOOPBACK, allow_loopback_plaintext=True)
    squatter = open_zeroconf(LOOPBACK)
    taken = AsyncServiceInfo(SERVICE_TYPE, instance_name(name), addresses=[socket.inet_aton("127.0.0.1")],
                             port=9, properties=txt_record(settings), server="squatter.local.")
    await squatter.async_register_service(taken)
    peers = PeerRegistry()
    try:
        async with open_port() as port, serve(port, settings, peers) as srv, \
                a2a_lifespan(settings, srv.base_url, peers):
            assert peers.own and instance_name(name) not in peers.own  # renamed: the name was taken
            mine = {"name": name, "interfaces": LOOPBACK, "allow_loopback_plaintext": True}
            ctx = BuiltinContext(name="a2a", data_dir=tmp_path, settings=mine, services={"a2a_peers": peers})
            async with Client(create_server(ctx)) as tools:
                found = (await tools.call_tool("a2a_discover", {"timeout": 3})).structured_content
                assert all(p["rpc_url"] != srv.rpc_url for p in found["peers"]), found
                assert all(p.rpc_url != srv.rpc_url for p in peers.verified())
                _degraded_unless_a_peer_is_listed(srv.service, peers)
                sent = await tools.call_tool("a2a_send", {"peer": name, "text": "hello, me"})
                assert sent.is_error and "unknown or unverified peer" in sent.content[0].text
    finally:
        await squatter.async_unregister_service(taken)
        await squatter.async_close()


async def test_an_announcement_of_sentinels_own_address_under_another_name_is_not_a_peer(tmp_path):
    """Anyone on the link can announce any address under any name: one that announces Sentinel's own endpoint
    (a loopback address reaches it from inside) had Sentinel fetch its own card, which checks out, and list
    itself as a verified peer under the announcer's name, in the browser's registry and in a2a_discover's.
    Sentinel tells its own card by a mark only its process knows, not by a name or an address."""
    reason = multicast_problem()
    if reason:
        pytest.skip(reason)
    from zeroconf.asyncio import AsyncServiceInfo

    from sentinel_mcp.a2a.discovery import SERVICE_TYPE
    from sentinel_mcp.a2a.peer_browser import open_zeroconf

    tag = uuid.uuid4().hex[:8]
    settings = A2ASettings(name=f"sentinel-self-{tag}", advertise=True, interfaces=LOOPBACK,
                           allow_loopback_plaintext=True)
    peers = PeerRegistry()
    announcer = open_zeroconf(LOOPBACK)
    async with open_port() as port, serve(port, settings, peers) as srv, \
            a2a_lifespan(settings, srv.base_url, peers):
        own_port = int(srv.base_url.rsplit(":", 1)[1])
        lure = AsyncServiceInfo(SERVICE_TYPE, f"helpful-{tag}.{SERVICE_TYPE}", port=own_port,
                                addresses=[socket.inet_aton("127.0.0.1")], properties=txt_record(settings),
                                server=f"helpful-{tag}.local.")
        await announcer.async_register_service(lure)
        try:
            assert await _wait_for(lambda: lure.name in peers.rejected or lure.name in peers.peers)
            assert lure.name not in peers.peers and "this agent" in peers.rejected[lure.name]
            mine = {"name": settings.name, "interfaces": LOOPBACK, "allow_loopback_plaintext": True}
            ctx = BuiltinContext(name="a2a", data_dir=tmp_path, settings=mine, services={"a2a_peers": peers})
            async with Client(create_server(ctx)) as tools:
                found = (await tools.call_tool("a2a_discover", {"timeout": 3})).structured_content
            assert all(p["rpc_url"] != srv.rpc_url for p in found["peers"]), found
            assert all(p.rpc_url != srv.rpc_url for p in peers.verified())
            _degraded_unless_a_peer_is_listed(srv.service, peers)
        finally:
            await announcer.async_unregister_service(lure)
            await announcer.async_close()
