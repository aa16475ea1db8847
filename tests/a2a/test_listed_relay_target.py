"""A chat bridged to a listed agent (``a2a_relay`` to a ``sentinel.a2a.bridge_targets`` name) reaches it only
as ``a2a_send`` does: the card at the listed URL is fetched and checked (``listed_peer_card.verify_listed``),
and the guard's verdict is on that card. Before, a listed target was the owner's word for what answered there:
its URL was sent to unchecked and reported verified, so whatever answered at that address (another agent, one
naming another endpoint, a card signed by a key other than the pinned one, or no agent card at all) got the
person's words without a question.

Real HTTP agents on 127.0.0.1; the guarded test runs the real gateway and SWI-Prolog guard
(``rulebases/a2a.pl``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from mcp import Client
from tests.a2a.listed_agent import listed_agent
from tests.a2a.test_card_signatures import card_at, pem, sign
from tests.a2a.test_unverified_send import Person, gateway, said

from sentinel_mcp.a2a.discovery import PeerRegistry
from sentinel_mcp.a2a.mcp_tools import create_server
from sentinel_mcp.core.builtin import BuiltinContext

pytestmark = pytest.mark.timeout(120)

LISTED = "helper"
PINNED = ec.generate_private_key(ec.SECP256R1())
OTHER = ec.generate_private_key(ec.SECP256R1())
RELAY = {"target": LISTED, "text": "the person's words", "context_id": "c-1"}


def signed_once(port: int) -> dict[str, Any]:
    """The listed card signed by its pinned key, the same bytes at each fetch (an ECDSA signature is drawn
    anew each time: signed again, it would be another card, refused as changed since the guard's check)."""
    if port not in SIGNED:
        SIGNED[port] = sign(card_at(port, LISTED), PINNED)
    return SIGNED[port]


SIGNED: dict[int, dict[str, Any]] = {}


def tools_for(tmp_path: Path, port: int, **more: Any) -> Client:
    settings = {"allow_loopback_plaintext": True,
                "bridge_targets": {LISTED: f"http://127.0.0.1:{port}/a2a"}, **more}
    ctx = BuiltinContext(name="a2a", data_dir=tmp_path, settings=settings,
                         services={"a2a_peers": PeerRegistry()})
    return Client(create_server(ctx))


# each: the card served at the listed URL, the settings beyond the listing, and what the refusal must say
REFUSED: dict[str, tuple[Callable[[int], dict[str, Any] | None], dict[str, Any], str]] = {
    "another agent's card": (lambda port: card_at(port, "mallory"), {}, "another agent answers there"),
    "a look-alike's card": (lambda port: card_at(port, "he\u0142per"), {}, "another agent answers there"),
    "an interface elsewhere": (lambda port: card_at(port + 1, LISTED), {},
                               "no JSONRPC interface at its listed"),
    "signed by another key": (lambda port: sign(card_at(port, LISTED), OTHER),
                              {"peer_keys": {LISTED: pem(PINNED)}}, "signature"),
    "a bad signature": (lambda port: {**sign(card_at(port, LISTED), PINNED), "description": "changed"},
                        {"peer_keys": {LISTED: pem(PINNED)}}, "signature"),
    "unsigned though pinned": (lambda port: card_at(port, LISTED), {"peer_keys": {LISTED: pem(PINNED)}},
                               "signature"),
    "no card": (lambda port: None, {}, "HTTP 404"),
}


@pytest.mark.parametrize("case", list(REFUSED))
async def test_a_listed_target_whose_card_does_not_check_out_is_not_relayed_to(tmp_path: Path,
                                                                             case: str) -> None:
    card, more, why = REFUSED[case]
    async with listed_agent(card) as (port, got):
        async with tools_for(tmp_path, port, **more) as tools:
            verdict = (await tools.call_tool("a2a_peer_check", {"peer": LISTED, "bridged": True})
                       ).structured_content
            relayed = await tools.call_tool("a2a_relay", RELAY)
    assert verdict["known"] is False and why in verdict["peer"], verdict  # type: ignore[index]
    assert relayed.is_error and why in said(relayed) and "nothing was sent" in said(relayed), said(relayed)
    assert got == [], got


async def test_a_listed_target_signed_by_its_pinned_key_is_relayed_to_verified(tmp_path: Path) -> None:
    async with listed_agent(signed_once) as (port, got):
        async with tools_for(tmp_path, port, peer_keys={LISTED: pem(PINNED)}) as tools:
            verdict = (await tools.call_tool("a2a_peer_check", {"peer": LISTED, "bridged": True})
                       ).structured_content
            relayed = await tools.call_tool("a2a_relay", RELAY)
    assert verdict["known"] is True and verdict["verified"] is True, verdict  # type: ignore[index]
    assert not relayed.is_error and relayed.structured_content["texts"] == ["done"], said(relayed)  # type: ignore[index]
    assert len(got) == 1, got


async def test_an_unsigned_listed_target_is_relayed_to_only_with_the_users_yes(tmp_path: Path) -> None:
    """Listed but unsigned: who answers there is who it says only by its own card, so the guard asks."""
    async with listed_agent(lambda port: card_at(port, LISTED)) as (port, got):
        for answer, reached in ((False, 0), (True, 1)):
            person = Person(answer)
            async with gateway(tmp_path, PeerRegistry(), allow_loopback_plaintext=True,
                               bridge_targets={LISTED: f"http://127.0.0.1:{port}/a2a"}) as rt, \
                    Client(rt.front.server, mode="auto", elicitation_callback=person) as c:
                relayed = await c.call_tool("a2a__a2a_relay", RELAY)
            assert relayed.is_error is (not answer), said(relayed)
            assert len(got) == reached, got
            [question] = person.asked
            assert "UNVERIFIED" in question and LISTED in question, question


async def test_the_guards_refusal_of_a_listed_target_says_its_card_did_not_check_out(tmp_path: Path) -> None:
    """rulebases/a2a.pl's relay refusal names what is checked: a listed target's card, not its listing alone
    (a listed target whose card does not check out is refused though the owner configured it)."""
    async with listed_agent(lambda port: card_at(port, "mallory")) as (port, got):
        async with gateway(tmp_path, PeerRegistry(), allow_loopback_plaintext=True,
                           bridge_targets={LISTED: f"http://127.0.0.1:{port}/a2a"}) as rt, \
                Client(rt.front.server, mode="auto", elicitation_callback=Person(True)) as c:
            relayed = await c.call_tool("a2a__a2a_relay", RELAY)
    assert relayed.is_error and got == [], said(relayed)
    assert "card" in said(relayed) and "configured bridge target" not in said(relayed), said(relayed)
