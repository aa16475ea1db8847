"""An announced peer is trusted no further than its card checks out now. Its card was checked when it was
announced, and sends went on that check for as long as the announcement stood: a peer pinned to a key
(``peer_keys``) that then served a card signed by another key, or none, at the same address (no new
announcement, so no new check) was still sent to as the verified, pinned peer. Now each send to an announced
peer fetches and checks its card again (as a listed peer's is): a card its pin no longer verifies is refused
and said, the peer dropped from the list with the reason (never re-pinned), and a card that changed in any
other way is another peer for the verdict the send was decided on. Real HTTP on 127.0.0.1."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from mcp import Client

from sentinel_mcp.a2a.discovery import PeerRegistry, txt_record, verify_peer
from sentinel_mcp.a2a.mcp_tools import create_server
from sentinel_mcp.a2a.settings import A2ASettings
from sentinel_mcp.core.builtin import BuiltinContext
from tests.a2a.test_card_signatures import card_at, pem, sign
from tests.a2a.test_peer_cannot_route import recording_agent

pytestmark = pytest.mark.timeout(60)
FIRST = ec.generate_private_key(ec.SECP256R1())
LATER = ec.generate_private_key(ec.SECP256R1())
INSTANCE = "alice._a2a._tcp.local."


def said(result: Any) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)


@pytest.mark.parametrize("how", ["pinned", "trusted"])
@pytest.mark.parametrize("later", ["another key", "unsigned"])
async def test_a_peer_whose_card_changes_key_after_its_check_is_not_sent_to(tmp_path: Any, how: str,
                                                                            later: str) -> None:
    keys: dict[str, Any] = {"peer_keys": {"alice": pem(FIRST)}} if how == "pinned" else {
        "trusted_keys": [pem(FIRST)]}
    # (standalone, a2a_send is the user's own call: an unverified peer is refused only with this on; through
    # the gateway the sending guard asks the user: test_unverified_send)
    settings = {"allow_loopback_plaintext": True, "require_verified_peers": True, **keys}
    serving = {"key": FIRST}

    def card(port: int) -> dict[str, Any]:
        key = serving["key"]
        return sign(card_at(port, "alice"), key) if key is not None else card_at(port, "alice")

    async with recording_agent(card=card) as (port, got):
        registry = PeerRegistry()
        async with httpx2.AsyncClient(timeout=5) as http:  # announced and checked, as the browser does
            registry.peers[INSTANCE] = await verify_peer(
                INSTANCE, ["127.0.0.1"], port, txt_record(A2ASettings()), http, allow_loopback_plaintext=True,
                keys=A2ASettings.model_validate(settings).card_keys)
        assert registry.peers[INSTANCE].trust.verified
        ctx = BuiltinContext(name="a2a", data_dir=tmp_path, settings=settings,
                             services={"a2a_peers": registry})
        async with Client(create_server(ctx)) as tools:
            sent = await tools.call_tool("a2a_send", {"peer": "alice", "text": "my data"})
            assert not sent.is_error and len(got) == 1, said(sent)
            serving["key"] = LATER if later == "another key" else None  # no new announcement
            refusals = []
            for _ in range(2):  # refused, and not re-pinned or re-trusted by trying again
                refused = await tools.call_tool("a2a_send", {"peer": "alice", "text": "my data"})
                assert refused.is_error and len(got) == 1, said(refused)
                refusals.append(said(refused))
            listed = (await tools.call_tool("a2a_peer_check", {"peer": "alice"})).structured_content
        assert listed is not None and listed.get("verified") is not True, listed
        if how == "trusted" and later == "unsigned":  # no key vouches for it now: the unverified peer it is
            assert not registry.peers[INSTANCE].trust.verified and "unverified" in refusals[0], refusals
        else:  # its card no longer verifies with the key configured for it: dropped, and why is said
            why = "pinned" if how == "pinned" else "trusted key"
            assert why in refusals[0], refusals
            assert INSTANCE not in registry.peers and why in registry.rejected[INSTANCE], registry.rejected


async def test_an_orchestrator_found_over_mdns_whose_key_changes_gets_no_more_intents(tmp_path: Any) -> None:
    """Every principal's intents go to the orchestrator found over mDNS, on its pinned card: a card its pin
    no longer verifies (served at the same address, no new announcement) gets none, and says why."""
    settings = {"allow_loopback_plaintext": True, "orchestrator_discover": True,
                "peer_keys": {"edge": pem(FIRST)}}
    serving = {"key": FIRST}

    def card(port: int) -> dict[str, Any]:
        role = [{"id": "plan", "name": "plan", "description": "d", "tags": ["orchestrator"]}]
        return sign({**card_at(port, "edge"), "skills": role}, serving["key"])

    async with recording_agent(card=card) as (port, got):
        registry = PeerRegistry()
        name = "edge._a2a._tcp.local."
        async with httpx2.AsyncClient(timeout=5) as http:
            registry.peers[name] = await verify_peer(
                name, ["127.0.0.1"], port, txt_record(A2ASettings()), http, allow_loopback_plaintext=True,
                keys=A2ASettings.model_validate(settings).card_keys)
        ctx = BuiltinContext(name="a2a", data_dir=tmp_path, settings=settings,
                             services={"a2a_peers": registry})
        async with Client(create_server(ctx)) as tools:
            taken = await tools.call_tool("a2a_offer", {"intent": "plan my day", "intent_id": "i-1"})
            assert taken.structured_content["taken"] is True and len(got) == 1, said(taken)  # type: ignore[index]
            serving["key"] = LATER
            declined = (await tools.call_tool("a2a_offer", {"intent": "plan my day", "intent_id": "i-2"}))
        out = declined.structured_content
        assert out is not None and out["taken"] is False and "pinned" in out["reason"] and len(got) == 1, out
        assert name not in registry.peers and "pinned" in registry.rejected[name]
