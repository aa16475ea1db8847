"""A peer the owner lists in the config (``bridge_targets``: its name and where it answers) keeps its name:
anyone on the link can announce a card whose name reads as it (Cyrillic or Greek capitals, zeros, a dot
above, full-width letters, another case, a zero-width joiner), before or after the listed peer starts.
Such an announcement is refused, its reason shown where rejections are listed, and the listed peer's name
still finds the listed peer (before, a look-alike beside it made the name find nobody: whoever announced
first or last, anyone could take the name away). Names the config does not list keep the old rule: two
announced look-alikes are ambiguous, found by neither name.

Cards are served over real HTTP on 127.0.0.1; the mDNS test announces and browses with real zeroconf there.
"""

from __future__ import annotations

import asyncio
import secrets
import socket
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from tests.a2a.a2a_rig import LOOPBACK, multicast_problem
from tests.a2a.card_server import serving_card
from tests.a2a.lan_announcer import many_machines
from tests.a2a.test_card_signatures import card_at

from sentinel_mcp.a2a.discovery import SERVICE_TYPE, PeerRegistry, PeerRejected, txt_record, verify_peer
from sentinel_mcp.a2a.peer_browser import PeerBrowser, open_zeroconf
from sentinel_mcp.a2a.mcp_tools import create_server
from sentinel_mcp.a2a.settings import A2ASettings
from sentinel_mcp.core.builtin import BuiltinContext
from tests.support.run_tags import untagged

pytestmark = pytest.mark.timeout(120)

TAG = str(secrets.randbelow(900_000) + 100_000)  # digits: every spelling below stays of one script
LISTED = f"book-{TAG}"
# each reads as LISTED to a person (or is it, folded), and answers somewhere else
SPOOFS = [
    LISTED,  # the name itself
    f"\u0412\u041e\u041e\u041a-{TAG}",  # Cyrillic В, О, О, К
    f"\u0432\u043e\u043e\u043a-{TAG}",  # Cyrillic lower case
    f"\u0392\u039f\u039f\u039a-{TAG}",  # Greek capitals
    f"B00K-{TAG}",  # zeros
    f"b\u022fok-{TAG}",  # a dot above
    f"\uff42\uff4f\uff4f\uff4b-{TAG}",  # full-width letters (the name itself, folded)
    f"BOOK-{TAG}",  # another case (the name itself, folded)
    f"Book-{TAG}",
    f"bo\u200dok-{TAG}",  # a zero-width joiner
    f"b\u03bfok-{TAG}",  # a Greek ο among Latin letters
    f"b\u043eok-{TAG}",  # a Cyrillic о among Latin letters
]


def listing(real_port: int) -> A2ASettings:
    return A2ASettings(allow_loopback_plaintext=True, interfaces=LOOPBACK,
                       bridge_targets={LISTED: f"http://127.0.0.1:{real_port}/a2a"})


async def _verify(settings: A2ASettings, port: int, instance: str) -> Any:
    async with httpx2.AsyncClient(timeout=5) as http:
        return await verify_peer(f"{instance}.{SERVICE_TYPE}", ["127.0.0.1"], port, txt_record(settings),
                                 http,
                                 allow_loopback_plaintext=True, keys=settings.card_keys,
                                 listed=settings.listed_peers)


@pytest.mark.parametrize("spelling", SPOOFS, ids=untagged(TAG))
async def test_a_card_named_like_a_listed_peer_elsewhere_is_refused(spelling: str) -> None:
    async with serving_card(lambda port: card_at(port, LISTED)) as real_port, \
            serving_card(lambda port: card_at(port, spelling)) as spoof_port:
        settings = listing(real_port)
        assert (await _verify(settings, real_port, "real")).card.name == LISTED
        with pytest.raises(PeerRejected, match="look-alike|listed peer|invisible|mixes letters") as refused:
            await _verify(settings, spoof_port, "spoof")
        assert LISTED in str(refused.value) or "invisible" in str(refused.value) \
            or "mixes" in str(refused.value), refused.value


@pytest.mark.parametrize("spelling", [s for s in SPOOFS if "\u200d" not in s and "\u03bf" not in s
                                      and "\u043eok" not in s], ids=untagged(TAG))
async def test_an_mdns_instance_named_like_a_listed_peer_elsewhere_is_refused(spelling: str) -> None:
    async with serving_card(lambda port: card_at(port, LISTED)) as real_port, \
            serving_card(lambda port: card_at(port, f"someone-{TAG}")) as spoof_port:
        with pytest.raises(PeerRejected, match="look-alike|listed peer"):
            await _verify(listing(real_port), spoof_port, spelling)


async def _until(check: Any, seconds: float = 20) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    while loop.time() < end and not check():
        await asyncio.sleep(0.1)


@pytest.mark.skipif(multicast_problem() is not None, reason=str(multicast_problem()))
async def test_look_alikes_announced_before_and_after_a_listed_peer_do_not_take_its_name(
        tmp_path: Path) -> None:
    from zeroconf.asyncio import AsyncServiceInfo

    before, after = SPOOFS[::2], SPOOFS[1::2]
    unlisted = [f"acme-{TAG}", f"\u0410\u0421\u041c\u0415-{TAG}"]  # Latin and Cyrillic: ambiguous, as before
    announcer = open_zeroconf(LOOPBACK)
    browsing = open_zeroconf(LOOPBACK)
    registry = PeerRegistry()
    infos: list[Any] = []

    async def announce(label: str, port: int) -> str:
        instance = f"{label}.{SERVICE_TYPE}"
        info = AsyncServiceInfo(SERVICE_TYPE, instance, addresses=[socket.inet_aton("127.0.0.1")], port=port,
                                properties=txt_record(A2ASettings()),
                                server=f"host-{label}.local.")
        await announcer.async_register_service(info)
        infos.append(info)
        return instance

    async def announce_all(labelled: list[tuple[str, int]]) -> list[str]:
        """Announced at once (each registration probes the link for a second or so); the order that matters,
        before or after the listed peer, is kept by awaiting each group."""
        return list(await asyncio.gather(*(announce(label, port) for label, port in labelled)))

    async with serving_card(lambda port: card_at(port, LISTED)) as real_port, \
            serving_card(lambda port: card_at(port, f"acme-{TAG}")) as acme_port, \
            serving_card(lambda port: card_at(port, unlisted[1])) as acme_spoof_port:
        settings = listing(real_port)
        spoof_ports = {}
        for spelling in SPOOFS:
            spoof_ports[spelling] = await _serving(spelling)
        browser = PeerBrowser(browsing, registry, allow_loopback_plaintext=True,
                              networks=settings.card_networks,
                              keys=settings.card_keys, listed=settings.listed_peers,
                              fetches=many_machines())  # (each spoof a machine of its own)
        await browser.start()
        try:
            spoofs = await announce_all([(f"spoof-{i}-{TAG}", spoof_ports[s][0])
                                         for i, s in enumerate(before)])
            await _until(lambda: all(s in registry.rejected for s in spoofs))
            real = await announce(f"real-{TAG}", real_port)
            await _until(lambda: real in registry.peers)
            late = await announce_all([(f"spoof-late-{i}-{TAG}", spoof_ports[s][0])
                                       for i, s in enumerate(after)]
                                      + [(f"acme-a-{TAG}", acme_port), (f"acme-b-{TAG}", acme_spoof_port)])
            spoofs += late[:-2]
            pair = late[-2:]
            await _until(lambda: all(s in registry.rejected for s in spoofs) and all(p in registry.peers
                                                                                     for p in pair))
            for spoof in spoofs:
                assert spoof not in registry.peers, (spoof, registry.peers[spoof].card.name)
                why = registry.rejected.get(spoof, "")
                assert LISTED in why or "invisible" in why or "mixes" in why, (spoof, why)
            for asked in (LISTED, LISTED.upper()):
                found = registry.find(asked)
                assert found is not None and found.instance == real, asked
                assert registry.ambiguous(asked) == [], asked
            assert all(registry.find(n) is None for n in unlisted)  # unlisted look-alikes: nobody, as before
            assert registry.ambiguous(unlisted[0]) == sorted(pair)
            ctx = BuiltinContext(name="a2a", data_dir=tmp_path,
                                 settings=settings.model_dump(exclude_unset=True),
                                 services={"a2a_peers": registry})
            async with Client(create_server(ctx)) as tools:
                verdict = (await tools.call_tool("a2a_peer_check", {"peer": LISTED})).structured_content
                assert verdict["known"] is True and str(real_port) in verdict["peer"], verdict
                listed = (await tools.call_tool("a2a_discover", {"timeout": 3})).structured_content
            shown = {k: v for k, v in listed["rejected"].items() if TAG in k}
            assert any("look-alike" in why and LISTED in why for why in shown.values()), shown
            assert [p["rpc_url"] for p in listed["peers"] if p["name"] == LISTED] \
                == [f"http://127.0.0.1:{real_port}/a2a"], listed["peers"]
        finally:
            await browser.stop()
            await asyncio.gather(*(announcer.async_unregister_service(info) for info in infos))
            await announcer.async_close()
            await browsing.async_close()
            for _, stop in spoof_ports.values():
                await stop()


async def _serving(name: str) -> tuple[int, Any]:
    """A card server left running (the caller stops it): its port and how to stop it."""
    holder = serving_card(lambda port: card_at(port, name))
    port = await holder.__aenter__()

    async def stop() -> None:
        await holder.__aexit__(None, None, None)

    return port, stop


@pytest.mark.parametrize("configured", ["listed", "pinned", "neither"])
async def test_announcing_a_peers_own_address_again_does_not_make_its_name_find_nobody(
        configured: str) -> None:
    """Anyone can announce the listed (or pinned) peer's own address and port under other instance names: the
    card fetched there is the peer's own, so each verifies, but they are one agent, not look-alikes of it."""
    from cryptography.hazmat.primitives.asymmetric import ec
    from tests.a2a.test_card_signatures import pem, sign

    key = ec.generate_private_key(ec.SECP256R1())
    async with serving_card(lambda port: sign(card_at(port, LISTED), key)) as port:
        settings = {"listed": listing(port), "neither": A2ASettings(),
                    "pinned": A2ASettings(peer_keys={LISTED: pem(key)})}[configured]
        registry = PeerRegistry()
        for instance in (LISTED, f"again-{TAG}", f"a-{TAG}", f"zz-{TAG}"):
            peer = await _verify(settings, port, instance)
            registry.peers[peer.instance] = peer
    for asked in (LISTED, LISTED.upper()):
        found = registry.find(asked)
        assert found is not None and found.rpc_url == f"http://127.0.0.1:{port}/a2a", asked
        assert registry.ambiguous(asked) == [], asked
        # shown (and asked about) as announced under its own name, not as whoever re-announced it
        assert found.instance == f"{LISTED}.{SERVICE_TYPE}", found.instance


@pytest.mark.skipif(multicast_problem() is not None, reason=str(multicast_problem()))
async def test_a_sentinel_listing_another_keeps_its_name_over_mdns(tmp_path: Path) -> None:
    """Two real Sentinels on 127.0.0.1, each advertising and browsing (``a2a_lifespan``); A lists B in
    ``bridge_targets``. Spoofers announce B's name in Cyrillic capitals and in another case, at their own
    addresses: A's own browser refuses both, saying why, and B's name finds B."""
    from tests.a2a.a2a_rig import open_port, serve
    from zeroconf.asyncio import AsyncServiceInfo

    from sentinel_mcp.a2a.app import a2a_lifespan

    b_name = f"book-{secrets.randbelow(900_000) + 100_000}"
    spoof_names = ["\u0412\u041e\u041e\u041a" + b_name[4:], b_name.upper()]
    b_set = A2ASettings(name=b_name, advertise=True, interfaces=LOOPBACK, allow_loopback_plaintext=True)
    a_peers = PeerRegistry()
    spoofer = open_zeroconf(LOOPBACK)
    infos = []
    async with serving_card(lambda port: card_at(port, spoof_names[0])) as cyrillic_port, \
            serving_card(lambda port: card_at(port, spoof_names[1])) as upper_port, \
            open_port() as port_b, serve(port_b, b_set) as b:
        a_set = A2ASettings(name=f"a-{b_name}", advertise=True, interfaces=LOOPBACK,
                            allow_loopback_plaintext=True, bridge_targets={b_name: b.rpc_url})
        async with open_port() as port_a, serve(port_a, a_set, a_peers) as a, \
                a2a_lifespan(a_set, a.base_url, a_peers):
            try:
                for i, spoof_port in enumerate((cyrillic_port, upper_port)):  # announced before B starts
                    info = AsyncServiceInfo(SERVICE_TYPE, f"spoof-{i}-{b_name}.{SERVICE_TYPE}",
                                            addresses=[socket.inet_aton("127.0.0.1")], port=spoof_port,
                                            properties=txt_record(A2ASettings()),
                                            server=f"spoof-{i}-{b_name}.local.")
                    await spoofer.async_register_service(info)
                    infos.append(info)
                spoofs = [info.name for info in infos]
                await _until(lambda: all(s in a_peers.rejected for s in spoofs))
                async with a2a_lifespan(b_set, b.base_url):
                    await _until(lambda: any(p.rpc_url == b.rpc_url for p in a_peers.verified()))
                    assert "look-alike" in a_peers.rejected[spoofs[0]], a_peers.rejected
                    assert "places elsewhere" in a_peers.rejected[spoofs[1]], a_peers.rejected
                    found = a_peers.find(b_name)
                    assert found is not None and found.rpc_url == b.rpc_url, a_peers.ambiguous(b_name)
            finally:
                for info in infos:
                    await spoofer.async_unregister_service(info)
                await spoofer.async_close()
