"""A peer's name read as another's: a hostile agent on the link announces "Вооking Agent" (Cyrillic В and о),
"ΒΟΟΚ" in Greek capitals, the name with a zero-width space, a combining dot or a right-to-left override
inside, and a person (or a rule shown the name) reads the pinned or listed peer's. Such a name is never
matched to the peer it imitates: a look-alike of a pinned name is refused, a name that mixes scripts or hides
characters is refused, and a name look-up that a look-alike shares finds nobody and says why. A real peer
whose name is all of one other script ("Бронирование", "Κράτηση") is a peer like any other.

Cards are served over real HTTP on 127.0.0.1 and fetched by ``verify_peer`` as discovery does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from tests.a2a.card_server import serving_card
from tests.a2a.test_card_signatures import ALICE, MALLORY, card_at, fetched, pem, sign

from sentinel_mcp.a2a.discovery import Peer, PeerRegistry, PeerRejected, txt_record, verify_peer
from sentinel_mcp.a2a.mcp_tools import create_server
from sentinel_mcp.a2a.settings import A2ASettings
from sentinel_mcp.core.builtin import BuiltinContext

pytestmark = pytest.mark.timeout(60)

PINNED = "Booking Agent"
# each reads as "Booking Agent" to a person; none is that name (compatibility forms and case are the name
# itself: "ＢＯＯＫＩＮＧ agent" or "booking AGENT" must carry the pinned key's signature, as before)
SPOOFS = [
    "\u0412\u043e\u043eking Agent",  # Cyrillic В, о, о
    "b\u043eoking agent",  # one Cyrillic о, lower case
    "\u0392\u039f\u039fKING AGENT",  # Greek Β, Ο, Ο
    "\u0412\u041e\u041e\u041a\u0406\u039dG \u0410G\u0415\u039d\u0422",  # Cyrillic and Greek capitals, Latin G
    "Boo\u200bking Agent",  # a zero-width space inside
    "Bo\u0307oking Agent",  # a combining dot above
    "Booking\u00a0Agent\u202e",  # a right-to-left override at the end
    "Boo\u2060king\u00adAgent",  # a word joiner and a soft hyphen
    "B00king Agent",  # zeros for the o's
    "Bookinɡ Agent",  # Latin small script g
]
SINGLE_SCRIPT_SPOOFS = ["\u0412\u041e\u041e\u041a", "\u0392\u039f\u039f\u039a"]  # "BOOK" in Cyrillic, Greek


def pinned(name: str = PINNED) -> Any:
    return A2ASettings(peer_keys={name: pem(ALICE)}).card_keys


@pytest.mark.parametrize("spelling", SPOOFS)
async def test_a_look_alike_of_a_pinned_name_is_refused_whoever_signed_it(spelling: str) -> None:
    for served in (lambda port: card_at(port, spelling), lambda port: sign(card_at(port, spelling), MALLORY)):
        with pytest.raises(PeerRejected, match="look-alike|invisible"):
            await fetched(served, pinned())


@pytest.mark.parametrize("spelling", SINGLE_SCRIPT_SPOOFS)
async def test_a_single_script_look_alike_of_a_pinned_name_is_refused(spelling: str) -> None:
    with pytest.raises(PeerRejected, match="looks like the pinned peer"):
        await fetched(lambda port: sign(card_at(port, spelling), MALLORY), pinned("book"))


@pytest.mark.parametrize("spelling", SINGLE_SCRIPT_SPOOFS)
async def test_a_look_alike_of_a_pinned_mdns_instance_is_refused(spelling: str) -> None:
    with pytest.raises(PeerRejected, match="looks like the pinned peer"):
        await fetched(lambda port: card_at(port, "someone"), pinned("book"), instance=spelling)


@pytest.mark.parametrize("spelling", ["b\u043eoking", "Boo\u200bking", "kitchen\u202e", "ho\u0456me-hub",
                                      "\u0399\u043d\u0431\u043e\u043a\u0441"])
async def test_a_name_that_mixes_scripts_or_hides_characters_is_refused_with_no_pin(spelling: str) -> None:
    with pytest.raises(PeerRejected, match="look-alike|invisible"):
        await fetched(lambda port: card_at(port, spelling), A2ASettings().card_keys)
    with pytest.raises(PeerRejected, match="look-alike|invisible"):
        await fetched(lambda port: card_at(port, "plain"), A2ASettings().card_keys, instance=spelling)


@pytest.mark.parametrize("name", ["Бронирование", "Κράτηση", "東京タワー Tower", "Wi-Fi 设置"])
async def test_a_peer_named_in_one_other_script_is_verified_and_found(name: str) -> None:
    peer = await fetched(lambda port: sign(card_at(port, name), ALICE), pinned(name))
    assert peer.trust.verified
    registry = PeerRegistry()
    registry.peers[peer.instance] = peer
    assert registry.find(name) is peer and registry.find(name.upper()) is peer
    assert registry.ambiguous(name) == [] and registry.look_alikes(name) == []


async def _listed(*names: str) -> PeerRegistry:
    """A registry of real peers, each card served on 127.0.0.1 and checked by ``verify_peer``."""
    registry = PeerRegistry()
    for i, name in enumerate(names):
        async with serving_card(lambda port, name=name: card_at(port, name)) as port, \
                httpx2.AsyncClient(timeout=5) as http:
            peer: Peer = await verify_peer(f"peer-{i}._a2a._tcp.local.", ["127.0.0.1"], port,
                                           txt_record(A2ASettings()), http, allow_loopback_plaintext=True)
        registry.peers[peer.instance] = peer
    return registry


@pytest.mark.parametrize("spelling", SINGLE_SCRIPT_SPOOFS + ["B00K", "Bȯok"])
async def test_a_look_alike_beside_a_listed_peer_makes_its_name_find_nobody(spelling: str) -> None:
    registry = await _listed("book", spelling)
    for asked in ("book", "BOOK", spelling):
        assert registry.find(asked) is None, asked
        assert registry.ambiguous(asked) == ["peer-0._a2a._tcp.local.", "peer-1._a2a._tcp.local."], asked
    assert registry.find("peer-0._a2a._tcp.local.").card.name == "book"  # (by its instance, as before)


@pytest.mark.parametrize("spelling", SINGLE_SCRIPT_SPOOFS + ["B00K", "Bȯok"])
async def test_a_look_alike_alone_is_not_found_by_the_name_it_imitates(spelling: str) -> None:
    registry = await _listed(spelling)
    assert registry.find("book") is None and registry.find("BOOK") is None
    assert registry.look_alikes("book") == ["peer-0._a2a._tcp.local."]
    assert registry.find(spelling) is not None  # its own name finds it


async def test_sending_by_a_name_a_look_alike_shares_says_so_and_sends_nothing(tmp_path: Path) -> None:
    registry = await _listed("\u0412\u041e\u041e\u041a")
    ctx = BuiltinContext(name="a2a", data_dir=tmp_path, settings={}, services={"a2a_peers": registry})
    async with Client(create_server(ctx)) as tools:
        sent = await tools.call_tool("a2a_send", {"peer": "BOOK", "text": "my card number"})
        assert sent.is_error and "look-alike" in sent.content[0].text, sent.content[0].text
        verdict = (await tools.call_tool("a2a_peer_check", {"peer": "BOOK"})).structured_content
        assert verdict["known"] is False, verdict


@pytest.mark.parametrize("name", ["b\u043eoking", "Boo\u200bking", "kitchen\u202e"])
def test_a_pin_on_a_name_no_peer_is_taken_by_is_a_config_error(name: str) -> None:
    """Such a name is refused as a peer's: its pin could never be used, and the owner is told at start."""
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="not a name a peer is taken by"):
        A2ASettings(peer_keys={name: pem(ALICE)})
    assert A2ASettings(peer_keys={"Бронирование": pem(ALICE)}).card_keys.pinned


async def test_the_listing_says_which_peers_read_alike() -> None:
    """A person reading a2a_discover (or the CLI) sees "BOOK" twice: each says which other reads as it."""
    registry = await _listed("book", "\u0412\u041e\u041e\u041a", "kitchen")
    shown = {s["instance"]: s["reads_like"] for s in registry.summaries()}
    assert shown == {"peer-0._a2a._tcp.local.": ["peer-1._a2a._tcp.local."],
                     "peer-1._a2a._tcp.local.": ["peer-0._a2a._tcp.local."], "peer-2._a2a._tcp.local.": []}
