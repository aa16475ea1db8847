"""A peer's card names the URL Sentinel's later calls go to (its messages, a token for it), and a card's
spelling of the checked address is the peer's word: ``127.0.0.1.`` and ``localhost.`` compare as the address
and the name they were checked as (``endpoint_url``: one trailing dot dropped), yet neither is resolved as
one: a name with a trailing dot is not in the hosts file and is not an address literal, so the network's
resolver (a LAN's DHCP-given DNS, the announcer's own) says where it is. User names, passwords and fragments
in a card's URL are its writer's too. So the URL sent to is built from the address or listed endpoint that was
checked (the card gives only its path and query), never the card's spelling of it. Real HTTP on 127.0.0.1:
the card and the JSON-RPC endpoint served together, each request counted with its headers."""

from __future__ import annotations

import contextlib
import ipaddress
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from tests.support.served_app import served_app

from sentinel_mcp.a2a.discovery import PeerRejected, txt_record, verify_peer
from sentinel_mcp.a2a.listed_peer_card import verify_listed
from sentinel_mcp.a2a.card_signature import NO_KEYS
from sentinel_mcp.a2a.peer_client import call_peer
from sentinel_mcp.a2a.settings import A2ASettings

pytestmark = pytest.mark.timeout(60)
TOKEN = "owner-token-for-this-peer"
# {host}: the checked host as the card spells it; {port}: where it is served
ANNOUNCED_SPELLINGS = ["http://127.0.0.1.:{port}/a2a", "http://user:pw@127.0.0.1:{port}/a2a",
                       "http://127.0.0.1.:{port}/a2a#x", "HTTP://127.0.0.1.:{port}/a2a",
                       "http://u@127.0.0.1.:{port}/a2a?k=v"]
LISTED_SPELLINGS = ["http://localhost.:{port}/a2a", "http://LOCALHOST.:{port}/a2a",
                    "http://user:pw@localhost:{port}/a2a", "http://localhost.:{port}/a2a/"]


class Seen:
    def __init__(self) -> None:
        self.posts: list[dict[str, str]] = []


@contextlib.asynccontextmanager
async def agent(interface: str, name: str = "speller") -> AsyncIterator[tuple[int, Seen]]:
    seen = Seen()
    port = 0

    async def card(request: Request) -> Response:
        return JSONResponse({
            "name": name, "description": "d", "version": "1", "capabilities": {},
            "supportedInterfaces": [{"url": interface.format(port=port), "protocolBinding": "JSONRPC",
                                     "protocolVersion": "1.0"}],
            "defaultInputModes": [], "defaultOutputModes": [], "skills": []})

    async def rpc(request: Request) -> Response:
        seen.posts.append(dict(request.headers))
        body = await request.json()
        return JSONResponse({"jsonrpc": "2.0", "id": body["id"], "result": {"ok": True}})

    def app_at(bound: int) -> Starlette:
        nonlocal port
        port = bound
        return Starlette(routes=[Route("/.well-known/agent-card.json", card),
                                 Route("/a2a", rpc, methods=["POST"]), Route("/a2a/", rpc, methods=["POST"])])

    async with served_app(app_at, log_level="warning") as served:
        yield served, seen


def _names_only(url: str, host: str) -> None:
    parts = urlsplit(url)
    assert parts.hostname == host, url
    assert parts.username is None and parts.password is None and not parts.fragment, url


@pytest.mark.parametrize("interface", ANNOUNCED_SPELLINGS)
async def test_an_announced_peer_is_sent_to_at_the_address_checked(interface: str) -> None:
    async with agent(interface) as (port, seen), httpx2.AsyncClient(timeout=5) as http:
        peer = await verify_peer("speller", ["127.0.0.1"], port, txt_record(A2ASettings()), http,
                                 allow_loopback_plaintext=True)
        _names_only(peer.rpc_url, "127.0.0.1")
        assert ipaddress.ip_address(urlsplit(peer.rpc_url).hostname or "")  # an address: nothing resolved
        assert await call_peer(peer.rpc_url, "GetTask", {"id": "t"}, TOKEN) == {"ok": True}
    assert len(seen.posts) == 1
    assert seen.posts[0]["authorization"] == f"Bearer {TOKEN}"  # ours alone, never a card's Basic


@pytest.mark.parametrize("interface", LISTED_SPELLINGS)
async def test_a_listed_peer_is_sent_to_at_the_listed_endpoint(interface: str) -> None:
    async with agent(interface) as (port, seen), httpx2.AsyncClient(timeout=5) as http:
        peer = await verify_listed("speller", f"http://localhost:{port}/a2a", http, keys=NO_KEYS,
                                   allow_loopback_plaintext=True)
        _names_only(peer.rpc_url, "localhost")
        assert await call_peer(peer.rpc_url, "GetTask", {"id": "t"}, TOKEN) == {"ok": True}
    assert len(seen.posts) == 1
    assert seen.posts[0]["authorization"] == f"Bearer {TOKEN}"


async def test_a_card_naming_another_host_is_still_refused() -> None:
    for other in ("http://127.0.0.2:{port}/a2a", "http://127.0.0.1..:{port}/a2a", "http://2130706433:{port}/a2a",
                  "http://127.1:{port}/a2a", "http://[::ffff:127.0.0.1]:{port}/a2a", "http://localhost:{port}/a2a"):
        async with agent(other) as (port, seen), httpx2.AsyncClient(timeout=5) as http:
            with pytest.raises(PeerRejected, match="names none of the advertised"):
                await verify_peer("speller", ["127.0.0.1"], port, txt_record(A2ASettings()), http,
                                  allow_loopback_plaintext=True)
        assert seen.posts == []


