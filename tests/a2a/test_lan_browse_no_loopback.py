"""Browsing on a LAN interface, an announcement heard there may not aim Sentinel at this machine's own
loopback services: anyone on the link can announce ``127.0.0.1`` and a port (an admin console, PostgreSQL,
an adb server, another Sentinel's front), and the card fetch is a request Sentinel makes there. The default
networks are the browsed interfaces' own subnets: loopback only when loopback is browsed (or every
interface, ``0.0.0.0``, whose subnets include it). An owner who wants both lists them in ``peer_networks``.
Real HTTP: a counting TCP listener on 127.0.0.1 stands for the local service."""

from __future__ import annotations


import httpx2
import pytest
from tests.a2a.raw_listener import Counting, listening

from sentinel_mcp.a2a.discovery import PeerRejected, txt_record, verify_peer
from sentinel_mcp.a2a.settings import A2ASettings

pytestmark = pytest.mark.timeout(60)
TLS_TXT = {**txt_record(A2ASettings()), "tls": "1"}
LOOPBACK_SPELLINGS = ["127.0.0.1", "127.0.0.2", "127.255.255.254", "::1", "0:0:0:0:0:0:0:1",
                      "::ffff:127.0.0.1", "::ffff:7f00:1", "0.0.0.0", "2130706433", "0x7f.1", "0177.0.0.1",
                      "127.1", "localhost",
                      "localhost.", "fe80::1%lo", "::1%lo"]



def _lan_address() -> str | None:
    import ifaddr

    for adapter in ifaddr.get_adapters():
        for ip in adapter.ips:
            if isinstance(ip.ip, str) and not ip.ip.startswith("127."):
                return ip.ip
    return None


@pytest.fixture
def lan(monkeypatch: pytest.MonkeyPatch) -> str:
    """This machine's LAN address; on one with only loopback, the kernel's adapter list as a machine with a
    LAN interface gives it (a documentation address, 192.0.2.2/24, beside lo), so the test never skips."""
    import ifaddr

    found = _lan_address()
    if found is not None:
        return found
    adapters = [*ifaddr.get_adapters(), ifaddr.Adapter("eth0", "eth0", [ifaddr.IP("192.0.2.2", 24, "eth0")])]
    monkeypatch.setattr(ifaddr, "get_adapters", lambda *a, **k: adapters)
    return "192.0.2.2"


async def test_an_announcement_on_the_lan_cannot_aim_the_card_fetch_at_loopback(lan: str) -> None:
    networks = A2ASettings(interfaces=[lan]).card_networks
    assert networks and not any(n.is_loopback for n in networks), networks
    async with listening(Counting()) as local, httpx2.AsyncClient(timeout=5) as http:
        for address in LOOPBACK_SPELLINGS:
            for txt, plaintext in ((TLS_TXT, False), (txt_record(A2ASettings()), True)):
                with pytest.raises(PeerRejected, match="outside the allowed networks"):
                    await verify_peer("spoof", [address], local.port, txt, http, networks=networks,
                                      allow_loopback_plaintext=plaintext)
        assert local.connections == 0


def test_loopback_is_in_the_defaults_when_it_is_browsed_and_by_the_owners_word(lan: str) -> None:
    assert all(n.is_loopback for n in A2ASettings().card_networks)  # the default interface is 127.0.0.1
    assert any(n.is_loopback for n in A2ASettings(interfaces=["127.0.0.1"]).card_networks)
    both = A2ASettings(interfaces=[lan], peer_networks=["127.0.0.1/32", f"{lan}/32"]).card_networks
    assert [str(n) for n in both] == ["127.0.0.1/32", f"{lan}/32"]
