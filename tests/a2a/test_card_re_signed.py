"""A card signature that is dated (``iat``/``exp``) must be made again before it expires, so Sentinel signs
its own card anew on a schedule (``card_signature_lifetime``: every half of it), and a peer that signs anew
(a new time, or ECDSA's new randomness) has not changed: a verdict is on the card's content and the keys that
vouch for it, never on the signature bytes. Before, Sentinel's own signature was undated (a replay of its card
could not be told from it), and a listed peer whose card was re-signed between the guard's check and the send
was refused as "changed". The keys of the signers still count: the same card signed by another, unknown key
is another card. Real ECDSA signatures, cards served over real HTTP on 127.0.0.1."""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path
from typing import Any

import httpx2
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from tests.a2a.a2a_rig import open_port, serve
from tests.a2a.test_card_signatures import card_at, pem, signature
from tests.a2a.test_listed_peer_send import LISTED, tools_for
from tests.a2a.test_own_card_signature import public_pem, write_key
from tests.a2a.test_peer_cannot_route import recording_agent
from tests.a2a.test_unverified_send import said

from sentinel_mcp.a2a.card_canonical import signed_form
from sentinel_mcp.a2a.card_signer import CardSigner
from sentinel_mcp.a2a.discovery import txt_record, verify_peer
from sentinel_mcp.a2a.settings import A2ASettings
from sentinel_mcp.config import ConfigError

pytestmark = pytest.mark.timeout(120)


def header_of(card: dict[str, Any]) -> dict[str, Any]:
    protected = card["signatures"][0]["protected"]
    return json.loads(base64.urlsafe_b64decode(protected + "=" * (-len(protected) % 4)))


class Clock:
    def __init__(self) -> None:
        self.now = float(int(time.time()))

    def __call__(self) -> float:
        return self.now


def test_sentinels_own_signature_is_dated_and_made_anew_before_it_expires(tmp_path: Path) -> None:
    clock = Clock()
    signer = CardSigner(write_key(tmp_path, ec.generate_private_key(ec.SECP256R1())), lifetime=3600,
                        clock=clock)
    card = card_at(8765, "me")
    first = signer.sign(card)
    header = header_of(first)
    assert header["iat"] == int(clock.now) and header["exp"] == int(clock.now) + 3600, header
    clock.now += 1799  # within half its lifetime: the same signature (the ETag holds)
    assert signer.sign(card) == first
    clock.now += 1  # half its lifetime: signed anew, dated now, long before the old one expires
    again = signer.sign(card)
    assert again["signatures"] != first["signatures"]
    assert header_of(again)["iat"] == int(clock.now) and header_of(again)["exp"] == int(clock.now) + 3600
    changed = {**card, "description": "another"}  # a changed card is signed at once, whatever its age
    assert header_of(signer.sign(changed))["iat"] == int(clock.now)


@pytest.mark.parametrize("lifetime", [0, -1, 59, 400 * 86400, True, "3600", float("nan"), 3600.5, None])
def test_a_signature_lifetime_out_of_bounds_is_refused(tmp_path: Path, lifetime: Any) -> None:
    key = write_key(tmp_path, ec.generate_private_key(ec.SECP256R1()))
    assert A2ASettings(card_signing_key=key, card_signature_lifetime=600).card_signature_lifetime == 600
    with pytest.raises((ConfigError, ValueError), match="card_signature_lifetime"):
        A2ASettings(card_signing_key=key, card_signature_lifetime=lifetime)


async def test_a_peer_bounding_card_age_takes_a_served_sentinels_card_dated(tmp_path: Path) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    settings = A2ASettings(name="dated-sentinel", card_signing_key=write_key(tmp_path, key))
    async with open_port() as port, serve(port, settings) as served, httpx2.AsyncClient(timeout=10) as http:
        where = int(served.base_url.rsplit(":", 1)[1])
        keys = A2ASettings(peer_keys={"dated-sentinel": public_pem(key)}, card_max_age=3600).card_keys
        peer = await verify_peer("s._a2a._tcp.local.", ["127.0.0.1"], where, txt_record(A2ASettings()), http,
                                 allow_loopback_plaintext=True, keys=keys)
        raw = (await http.get(f"{served.base_url}/.well-known/agent-card.json")).json()
    assert peer.trust.verified and "undated" not in peer.trust.note, peer.trust.note
    header = header_of(raw)
    assert header["exp"] - header["iat"] == 3600, header  # the default lifetime
    assert abs(header["iat"] - time.time()) < 86400, header


def dated_signature(key: Any, card: dict[str, Any], at: int) -> dict[str, str]:
    header = {"alg": "ES256", "typ": "JOSE", "iat": at, "exp": at + 60}
    return signature(key, "ES256", signed_form(card), header)


@pytest.mark.parametrize("how", ["pinned", "unpinned"])
async def test_a_listed_peer_re_signed_between_check_and_send_is_the_same_peer(tmp_path: Path,
                                                                                  how: str) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    fetches: list[int] = []

    def re_signed(port: int) -> dict[str, Any]:  # every fetch a new signature, a second later
        fetches.append(port)
        card = card_at(port, LISTED)
        return {**card, "signatures": [dated_signature(key, card, int(time.time()) + len(fetches))]}

    pins = {"peer_keys": {LISTED: pem(key)}} if how == "pinned" else {}
    async with recording_agent(card=re_signed) as (port, got):
        async with tools_for(tmp_path, port, **pins) as tools:
            checked = (await tools.call_tool("a2a_peer_check", {"peer": LISTED})).structured_content
            assert checked["known"] is True, checked  # type: ignore[index]
            sent = await tools.call_tool("a2a_send", {"peer": LISTED, "text": "my data"})
    assert len(fetches) >= 2, fetches  # fetched again before the send: another signature than the one checked
    assert not sent.is_error, said(sent)
    assert len(got) == 1, got


async def test_the_same_card_signed_by_another_unknown_key_is_another_card(tmp_path: Path) -> None:
    """Unpinned, the person was shown the key the card names: a card of that content under another key's
    signature is not what they were shown."""
    keys = [ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())]
    fetches: list[int] = []

    def signed_by_turns(port: int) -> dict[str, Any]:
        fetches.append(port)
        card = card_at(port, LISTED)
        key = keys[min(len(fetches), 2) - 1]
        header = {"alg": "ES256", "typ": "JOSE", "jwk": _jwk(key)}
        return {**card, "signatures": [signature(key, "ES256", signed_form(card), header)]}

    async with recording_agent(card=signed_by_turns) as (port, got):
        async with tools_for(tmp_path, port) as tools:
            checked = (await tools.call_tool("a2a_peer_check", {"peer": LISTED})).structured_content
            assert checked["known"] is True, checked  # type: ignore[index]
            sent = await tools.call_tool("a2a_send", {"peer": LISTED, "text": "my data"})
    assert sent.is_error and "changed after the guard checked" in said(sent), said(sent)
    assert got == []


def _jwk(key: Any) -> dict[str, str]:
    from sentinel_mcp.a2a.card_jwk import jwk_of

    return jwk_of(key.public_key())
