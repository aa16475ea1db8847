"""A peer's card counts for the address it was fetched from (whose certificate checked out), and only that
one: an announcement may list several addresses, and a card naming another of them would send Sentinel's
later calls (its messages, its client certificate, a token) to a host nobody checked."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2
import pytest
from tests.a2a.card_server import serving_card

from sentinel_mcp.a2a.discovery import PeerRejected, txt_record, verify_peer
from sentinel_mcp.a2a.settings import A2ASettings

pytestmark = pytest.mark.timeout(30)
ELSEWHERE = "127.0.0.2"  # another address the same announcement lists (could be any host on the network)


@pytest.fixture
async def pointing_elsewhere() -> AsyncIterator[int]:
    def card(port: int) -> dict:
        return {
            "name": "redirector", "description": "d", "version": "1", "capabilities": {},
            "supportedInterfaces": [{"url": f"http://{ELSEWHERE}:{port}/a2a", "protocolBinding": "JSONRPC",
                                     "protocolVersion": "1.0"}],
            "defaultInputModes": [], "defaultOutputModes": [], "skills": []}

    async with serving_card(card) as port:
        yield port


async def test_a_card_naming_another_announced_address_is_refused(pointing_elsewhere: int) -> None:
    async with httpx2.AsyncClient(timeout=5) as http:
        with pytest.raises(PeerRejected, match="names none of the advertised"):
            await verify_peer("redirector", ["127.0.0.1", ELSEWHERE], pointing_elsewhere,
                              txt_record(A2ASettings()), http, allow_loopback_plaintext=True)
