"""Anyone on the link can announce one agent's card under many instance names (at most
``MAX_NAMES_PER_ENDPOINT`` listed per address: test_announcement_fetch_bounds), or many cards of its own: each
that checks out was listed, without bound (10,000 names: 10,000 peers in every a2a_discover
answer the model reads, and each listing compared every peer's name with every other's). The list holds at
most ``MAX_PEERS``; when it is full an unsigned newcomer is refused, saying why, and a peer whose card a
configured key signed still gets in, in place of the oldest unsigned one (nobody can make a signed card by
announcing). Real zeroconf listener, announcements heard from loopback, cards served over real HTTP on
127.0.0.1 and fetched by the browser."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2
import pytest
from tests.a2a.card_server import serving_card, serving_cards
from tests.a2a.lan_announcer import HERE, Rig, announced, lan_rig, many_machines, packet, service
from tests.a2a.test_card_signatures import ALICE, card_at, pinned, sign

from sentinel_mcp.a2a import discovery
from sentinel_mcp.a2a.discovery import PeerRegistry, txt_record, verify_peer
from sentinel_mcp.a2a.protocol import AgentCard
from sentinel_mcp.a2a.settings import A2ASettings

pytestmark = pytest.mark.timeout(120)
FULL = "the list of peers is full"


@pytest.fixture
async def announcer() -> AsyncIterator[Rig]:
    async for r in lan_rig(keys=pinned(ALICE, "alice"), fetches=many_machines()):
        yield r


async def _announce(rig: Rig, port: int) -> tuple[str, str]:
    """One announcement of the card served at ``port`` under a new instance name: its name and verdict."""
    info = announced(port)
    rig.hear(packet(*service(info), *info.dns_addresses()), HERE)
    return info.name, await rig.verdict(info.name)


NAMES = discovery.MAX_NAMES_PER_ENDPOINT  # one address under this many names at most: a list fills from many


def servers_for(names: int) -> int:
    return -(-names // NAMES)


async def test_many_names_fill_the_list_only_to_its_bound(announcer: Rig) -> None:
    bound = discovery.MAX_PEERS
    async with serving_cards(servers_for(bound + 5), lambda port: card_at(port, "flood")) as ports:
        verdicts = [await _announce(announcer, ports[i // NAMES]) for i in range(bound + 5)]
    taken = [name for name, verdict in verdicts if verdict == "taken"]
    assert len(announcer.registry.peers) == bound == len(taken)
    assert set(taken) == {name for name, _ in verdicts[:bound]}  # the first come stay
    for name, verdict in verdicts[bound:]:
        assert FULL in verdict and name not in announcer.registry.peers
    assert len(announcer.registry.summaries()) == bound


async def test_a_signed_peer_is_taken_when_unsigned_ones_fill_the_list(announcer: Rig) -> None:
    bound = discovery.MAX_PEERS
    async with serving_cards(servers_for(bound), lambda port: card_at(port, "flood")) as flood:
        first = [(await _announce(announcer, flood[i // NAMES]))[0] for i in range(bound)]
        assert len(announcer.registry.peers) == bound
        # served while the flood's servers still hold their ports: a port of one just closed, handed out
        # again by the kernel, is an address already listed under its names at most (refused, rightly)
        async with serving_card(lambda port: sign(card_at(port, "alice"), ALICE)) as port:
            name, verdict = await _announce(announcer, port)
    assert verdict == "taken" and announcer.registry.peers[name].trust.verified
    assert len(announcer.registry.peers) == bound
    assert first[0] not in announcer.registry.peers  # the oldest unsigned one made room
    assert announcer.registry.find("alice") is announcer.registry.peers[name]


async def test_peers_merged_from_a_browse_keep_the_bound() -> None:
    """a2a_discover merges each browse's peers into the list kept between calls: the bound holds there too."""
    bound = discovery.MAX_PEERS
    kept, found = PeerRegistry(), PeerRegistry()
    each = bound // 2 + 3
    async with serving_cards(2 * servers_for(each), lambda port: card_at(port, "flood")) as ports, \
            httpx2.AsyncClient(timeout=5) as http:
        for registry, tag, mine in ((kept, "kept", ports[:servers_for(each)]),
                                    (found, "found", ports[servers_for(each):])):
            for i in range(each):
                peer = await verify_peer(f"{tag}-{i}.{discovery.SERVICE_TYPE}", ["127.0.0.1"],
                                         mine[i // NAMES], txt_record(A2ASettings()), http,
                                         allow_loopback_plaintext=True)
                registry.admit(peer)
    kept.merge(found)
    assert len(kept.peers) == bound
    assert sum(FULL in why for why in found.rejected.values()) == 2 * each - bound


async def test_a_full_list_of_one_big_card_is_listed_reading_each_card_once(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """One card of 200 KB announced under MAX_PEERS names: which names are one agent was decided by
    serializing both cards for each pair of peers, in every listing and every look-up by name (64 peers:
    8,192 serializations of 200 KB, 40 s of the event loop for one a2a_discover answer). A peer's card does
    not change once checked: what it is an agent of is worked out once."""
    registry = PeerRegistry()
    big = {"description": "d" * 200_000}
    served = servers_for(discovery.MAX_PEERS)
    async with serving_cards(served, lambda port: {**card_at(port, "flood"), **big}) as ports, \
            httpx2.AsyncClient(timeout=5) as http:
        for i in range(discovery.MAX_PEERS):
            registry.admit(await verify_peer(f"flood-{i}.{discovery.SERVICE_TYPE}", ["127.0.0.1"],
                                             ports[i // NAMES], txt_record(A2ASettings()), http,
                                             allow_loopback_plaintext=True))
    assert len(registry.peers) == discovery.MAX_PEERS
    dumps = 0
    dump = AgentCard.model_dump

    def counted(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        nonlocal dumps
        dumps += 1
        return dump(self, *args, **kwargs)

    monkeypatch.setattr(AgentCard, "model_dump", counted)
    for _ in range(3):
        assert len(registry.summaries()) == discovery.MAX_PEERS
        registry.find("flood")  # (agents at 16 addresses, one name: each compared with the others)
    assert dumps <= discovery.MAX_PEERS
