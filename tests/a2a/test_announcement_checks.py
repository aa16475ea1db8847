"""An mDNS announcement is its sender's word: it cannot make Sentinel GET arbitrary local ports or paths. A
plaintext peer on loopback counts only with ``allow_loopback_plaintext`` on (off by default), and the card
path in TXT is a plain path (no query, fragment, escapes, dot segments) naming an agent card (its last segment
``agent-card.json``, or ``agent.json`` as before A2A 0.3), checked before any request: a local service's
``/admin/shutdown`` or Sentinel's own console is never what an announcement makes it GET."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx2
import pytest
from tests.a2a.raw_listener import listening

from sentinel_mcp.a2a.discovery import PeerRejected, verify_peer
from sentinel_mcp.a2a.settings import A2ASettings


class Listener:
    """A local service that records every request line it receives (and answers 404)."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.port = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await reader.readline()
            self.requests.append(line.decode("latin-1").strip())
            writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            await writer.drain()
        finally:
            writer.close()


@pytest.fixture
async def local_service() -> AsyncIterator[Listener]:
    async with listening(Listener()) as listener:
        yield listener


HOSTILE_PATHS = [
    "/admin/shutdown?now=1",
    "/x#frag",
    "/.well-known/agent-card.json?x=1",
    "/%2e%2e/admin",
    "/../admin",
    "/a/./b",
    "/a/../../etc/passwd",
    "/a b",
    "/a\\b",
    "/a;b=c",
    "/a@evil",
    "/é",
    "/\u202eevil",
    "//evil.example/x",
    "http://127.0.0.1:22/",
    "admin",
    "/" + "a" * 250,
]


@pytest.mark.parametrize("path", HOSTILE_PATHS)
async def test_a_hostile_card_path_is_refused_before_any_request(local_service: Listener, path: str) -> None:
    async with httpx2.AsyncClient(timeout=5) as http:
        with pytest.raises(PeerRejected, match="bad card path"):
            await verify_peer("evil", ["127.0.0.1"], local_service.port, {"tls": "0", "path": path}, http,
                              allow_loopback_plaintext=True)
        with pytest.raises(PeerRejected, match="bad card path"):  # over TLS just the same
            await verify_peer("evil", ["127.0.0.1"], local_service.port, {"tls": "1", "path": path}, http)
    assert local_service.requests == []


# plain paths, but of no agent card: what a local service or Sentinel's own front answers GET on
NOT_A_CARD = ["/admin/shutdown", "/", "/console/", "/console/inbox", "/api/reload", "/metrics", "/a2a",
              "/.well-known/", "/agent-card.json.bak", "/agent-card.jsonx", "/x-agent-card.json",
              "/agent-card.json/", "/AGENT-CARD.JSON", "/.well-known/agent-card"]


@pytest.mark.parametrize("path", NOT_A_CARD)
async def test_a_path_that_names_no_agent_card_is_refused_before_any_request(
    local_service: Listener, path: str
) -> None:
    async with httpx2.AsyncClient(timeout=5) as http:
        for tls in ("0", "1"):
            with pytest.raises(PeerRejected, match="bad card path"):
                await verify_peer("evil", ["127.0.0.1"], local_service.port, {"tls": tls, "path": path}, http,
                                  allow_loopback_plaintext=True)
    assert local_service.requests == []


@pytest.mark.parametrize("path", ["/.well-known/agent-card.json", "/a2a/v1/.well-known/agent-card.json",
                                  "/.well-known/agent.json"])
async def test_a_card_path_under_a_prefix_or_by_its_older_name_is_fetched(
    local_service: Listener, path: str
) -> None:
    async with httpx2.AsyncClient(timeout=5) as http:
        with pytest.raises(PeerRejected, match="HTTP 404"):
            await verify_peer("local", ["127.0.0.1"], local_service.port, {"tls": "0", "path": path}, http,
                              allow_loopback_plaintext=True)
    assert local_service.requests == [f"GET {path} HTTP/1.1"]


@pytest.mark.parametrize("address", ["127.0.0.1", "127.0.0.2", "127.255.255.254", "::1"])
@pytest.mark.parametrize("path", ["/.well-known/agent-card.json", "/a2a/.well-known/agent-card.json"])
async def test_a_plaintext_loopback_announcement_is_refused_by_default(
    local_service: Listener, address: str, path: str
) -> None:
    txt = {"tls": "0", "path": path}
    async with httpx2.AsyncClient(timeout=5) as http:
        with pytest.raises(PeerRejected, match="allow_loopback_plaintext"):
            await verify_peer("spoof", [address], local_service.port, txt, http)
        with pytest.raises(PeerRejected, match="allow_loopback_plaintext"):  # a missing tls key is plaintext
            await verify_peer("spoof", [address], local_service.port, {"path": path}, http)
    assert local_service.requests == []


async def test_with_the_setting_on_a_plain_loopback_path_is_fetched(local_service: Listener) -> None:
    async with httpx2.AsyncClient(timeout=5) as http:
        with pytest.raises(PeerRejected, match="HTTP 404"):
            await verify_peer("local", ["127.0.0.1"], local_service.port,
                              {"tls": "0", "path": "/.well-known/agent-card.json"}, http,
                              allow_loopback_plaintext=True)
    assert local_service.requests == ["GET /.well-known/agent-card.json HTTP/1.1"]


def test_loopback_plaintext_is_off_unless_configured() -> None:
    assert A2ASettings().allow_loopback_plaintext is False
    assert A2ASettings.from_section({"allow_loopback_plaintext": True}).allow_loopback_plaintext is True
