"""An announced address is an address and nothing more. Python's ``ipaddress`` reads ``::1%<zone>`` with any
zone text but ``%`` (``::1%x]@169.254.169.254#`` is ``::1`` in zone ``x]@169.254.169.254#``), and the card URL
was built from the address as announced: ``https://[::1%x]@169.254.169.254#]:443/...``, whose host is the
metadata service (the bracketed part read as a user name, the rest as a fragment). The networks check said
"::1, loopback", the fetch went elsewhere. A zone, or any text that is not the address's own spelling, is
refused before anything is fetched; the URL is built from the address as parsed. Real TCP on 127.0.0.1."""

from __future__ import annotations


import httpx2
import pytest
from tests.a2a.raw_listener import Counting, listening

from sentinel_mcp.a2a.discovery import PeerRejected, verify_peer
from sentinel_mcp.a2a.peer_networks import LOOPBACK, allowed, parse_networks

pytestmark = pytest.mark.timeout(60)
TXT = {"tls": "1", "path": "/.well-known/agent-card.json"}



def smuggling(port: int) -> list[str]:
    """Addresses inside ::1/128 by ``ipaddress``'s reading whose URL names 127.0.0.1:<port>."""
    return [
        f"::1%x]@127.0.0.1:{port}#",
        f"::1%]@127.0.0.1:{port}?",
        f"::1%lo]@127.0.0.1:{port}#",
        f"0:0:0:0:0:0:0:1%]@127.0.0.1:{port}#",
    ]


async def test_an_address_with_zone_text_is_not_fetched_from_elsewhere() -> None:
    only_v6_loopback = parse_networks(["::1"])
    async with listening(Counting()) as target, httpx2.AsyncClient(timeout=5) as http:
        for address in smuggling(target.port):
            with pytest.raises(PeerRejected, match="outside the allowed networks"):
                await verify_peer("spoof", [address], 443, TXT, http, networks=only_v6_loopback)
        assert target.connections == 0  # nothing reached 127.0.0.1, outside the allowed ::1


@pytest.mark.parametrize("address", [
    "::1%lo", "::1%25lo", "::1%1", "::1%a b", "::1%x]@169.254.169.254#", "fe80::1%eth0",
    "127.0.0.1%lo", "::1 ", " ::1", "::1\n", "[::1]",
])
def test_zones_and_other_spellings_are_outside_every_network(address: str) -> None:
    assert not allowed(address, LOOPBACK + parse_networks(["fe80::/10", "0.0.0.0/0"]))


@pytest.mark.parametrize("address", ["::1", "0:0:0:0:0:0:0:1", "127.0.0.1", "127.9.8.7"])
def test_plain_loopback_addresses_are_inside(address: str) -> None:
    assert allowed(address, LOOPBACK)
