"""A signed agent card has no freshness of its own: a card signed once verifies for ever, so a process that
takes over a departed peer's loopback port (``allow_loopback_plaintext``) could serve that peer's old signed
card and pass for the pinned peer. The JWS protected header may carry when it was signed (``iat``) and until
when it holds (``exp``, seconds since the epoch, RFC 7519's claims as header parameters): a signature that
has expired, or was made in the future, is refused; with ``card_max_age`` one older than that is refused;
a time that is not a plain number is refused whatever is configured. An undated signature cannot be bounded
(said in docs/a2a.md). Cards are served over real HTTP on 127.0.0.1 and fetched as discovery does; signatures
are real ECDSA."""

from __future__ import annotations

import time
from typing import Any

import pytest
from tests.a2a.test_card_signatures import ALICE, card_at, fetched, pem, signature

from sentinel_mcp.a2a.card_canonical import signed_form
from sentinel_mcp.a2a.discovery import PeerRejected
from sentinel_mcp.a2a.settings import A2ASettings

pytestmark = pytest.mark.timeout(60)
DAY = 86400


def dated(port: int, **times: Any) -> dict[str, Any]:
    card = card_at(port)
    return {**card, "signatures": [signature(ALICE, "ES256", signed_form(card),
                                             {"alg": "ES256", "typ": "JOSE", **times})]}


def keys(max_age: float | None = None, how: str = "pinned") -> Any:
    pinned = {"peer_keys": {"alice": pem(ALICE)}} if how == "pinned" else {"trusted_keys": [pem(ALICE)]}
    return A2ASettings(**pinned, **({"card_max_age": max_age} if max_age else {})).card_keys


@pytest.mark.parametrize("how", ["pinned", "trusted"])
async def test_a_signature_older_than_the_max_age_is_refused(how: str) -> None:
    now = int(time.time())
    with pytest.raises(PeerRejected, match="signed .* ago; cards older than"):
        await fetched(lambda port: dated(port, iat=now - 2 * DAY), keys(DAY, how))
    fresh = await fetched(lambda port: dated(port, iat=now - 60), keys(DAY, how))
    assert fresh.trust.verified
    old = await fetched(lambda port: dated(port, iat=now - 2 * DAY), keys(None, how))  # no bound configured
    assert old.trust.verified


@pytest.mark.parametrize("times,refusal", [
    ({"exp": -1}, "expired"),
    ({"iat": 3600}, "in the future"),
    ({"iat": -60, "exp": -30}, "expired"),
])
async def test_an_expired_or_future_signature_is_refused_whatever_is_configured(
        times: dict[str, int], refusal: str) -> None:
    now = int(time.time())
    absolute = {k: now + v for k, v in times.items()}
    for max_age in (None, DAY):
        with pytest.raises(PeerRejected, match=refusal):
            await fetched(lambda port: dated(port, **absolute), keys(max_age))


@pytest.mark.parametrize("value", ["1700000000", "1.7e9", "NaN", True, False, None, [1], {"t": 1}, 1e300, -5])
@pytest.mark.parametrize("claim", ["iat", "exp"])
async def test_a_time_that_is_not_a_plain_number_is_refused(claim: str, value: Any) -> None:
    with pytest.raises(PeerRejected, match=f"{claim}"):
        await fetched(lambda port: dated(port, **{claim: value}), keys(DAY))


async def test_an_undated_signature_still_verifies_and_says_it_is_undated() -> None:
    peer = await fetched(lambda port: dated(port), keys(DAY))
    assert peer.trust.verified and "undated" in peer.trust.note, peer.trust.note


async def test_a_replayed_old_card_on_the_peers_port_is_refused() -> None:
    """The departed peer's card, signed two days ago with its pinned key, served again by whoever holds the
    port now: verified before the bound, refused with it."""
    old = int(time.time()) - 2 * DAY
    served: dict[int, dict[str, Any]] = {}

    def replayed(port: int) -> dict[str, Any]:
        return served.setdefault(port, dated(port, iat=old))

    assert (await fetched(replayed, keys(None))).trust.verified
    with pytest.raises(PeerRejected, match="older than"):
        await fetched(replayed, keys(3600))
