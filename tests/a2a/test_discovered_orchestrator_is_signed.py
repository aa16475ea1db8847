"""With ``orchestrator_discover``, the orchestrator found over mDNS receives every principal's free-form
intents:
anyone on the link can announce a card with an ``orchestrator`` skill, so a card counts for the role only when
its signature verified with a pinned or trusted key (``card_signature.py``); an unsigned or unchecked one does
not, and intents run locally. Cards are served over real HTTP on 127.0.0.1 and fetched as discovery does."""

from __future__ import annotations

from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from tests.a2a.test_card_signatures import card_at, fetched, pinned, sign, trusting

from sentinel_mcp.a2a.card_signature import CardKeys
from sentinel_mcp.a2a.discovery import PeerRegistry
from sentinel_mcp.a2a.orchestrator import orchestrator_rpc
from sentinel_mcp.a2a.settings import A2ASettings

pytestmark = pytest.mark.timeout(60)
EDGE = ec.generate_private_key(ec.SECP256R1())
SETTINGS = A2ASettings(orchestrator_discover=True)


def orchestrator_card(port: int) -> dict[str, Any]:
    return {**card_at(port, "edge"),
            "skills": [{"id": "plan", "name": "plan", "description": "d", "tags": ["orchestrator"]}]}


async def registry_of(served: Any, keys: CardKeys) -> PeerRegistry:
    registry = PeerRegistry()
    peer = await fetched(served, keys, instance="edge")
    registry.peers[peer.instance] = peer
    return registry


@pytest.mark.parametrize("keys", ["none configured", "another pinned", "another trusted"])
async def test_an_unsigned_orchestrator_card_gets_no_intents(keys: str) -> None:
    other = ec.generate_private_key(ec.SECP256R1())
    configured = {"none configured": CardKeys({}), "another pinned": pinned(other, "maps"),
                  "another trusted": trusting(other)}[keys]
    assert orchestrator_rpc(SETTINGS, await registry_of(orchestrator_card, configured)) is None


async def test_a_card_signed_by_a_key_nobody_configured_gets_no_intents() -> None:
    registry = await registry_of(lambda port: sign(orchestrator_card(port), EDGE), CardKeys({}))
    assert orchestrator_rpc(SETTINGS, registry) is None


@pytest.mark.parametrize("keys", ["pinned", "trusted"])
async def test_a_signed_orchestrator_card_is_taken(keys: str) -> None:
    configured = pinned(EDGE, "edge") if keys == "pinned" else trusting(EDGE)
    registry = await registry_of(lambda port: sign(orchestrator_card(port), EDGE), configured)
    assert orchestrator_rpc(SETTINGS, registry) == registry.peers["edge._a2a._tcp.local."].rpc_url
