"""One canonical comparison of a listed URL (``sentinel.a2a.bridge_targets``) and a card's interface URL
(``a2a/endpoint_url.py``), never by resolving a name: the same endpoint spelled differently (scheme or
host case, a trailing dot, a default port written out, a trailing slash, an IPv6 address's zeros) is the
listed one; a look-alike (``localhost`` for ``127.0.0.1``, ``[::1]``, the shorthands ``127.1``,
``2130706433``, ``0x7f.0.0.1``, a full-width name, a longer name that starts alike, another port or path) is
refused with the reason.

Before: a trailing dot or a default port was another endpoint only by string, and a shorthand listed URL was
fetched as whatever the resolver made of it, a refusal saying only "no JSONRPC interface at its listed URL".
Real card servers over HTTP on 127.0.0.1, checked through ``a2a_peer_check`` (the path a send takes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from tests.a2a.card_server import serving_card
from tests.a2a.test_card_signatures import card_at

from sentinel_mcp.a2a.card_signature import CardKeys
from sentinel_mcp.a2a.discovery import PeerRegistry, PeerRejected
from sentinel_mcp.a2a.listed_peer_card import verify_listed
from sentinel_mcp.a2a.endpoint_url import endpoint_difference
from sentinel_mcp.a2a.listed_peers import ListedPeers
from sentinel_mcp.a2a.mcp_tools import create_server
from sentinel_mcp.core.builtin import BuiltinContext
from sentinel_mcp.core.errors import ConfigError

pytestmark = pytest.mark.timeout(120)

NAME = "book"
# the card's interface URL, {port} filled in, for a peer listed at http://127.0.0.1:{port}/a2a
SAME = ["http://127.0.0.1:{port}/a2a", "HTTP://127.0.0.1:{port}/a2a", "http://127.0.0.1.:{port}/a2a",
        "http://127.0.0.1:{port}/a2a/", "http://user@127.0.0.1:{port}/a2a?x=1"]
LOOK_ALIKES = {  # the card's interface URL -> what the refusal must say
    "http://localhost:{port}/a2a": "never resolved",
    "http://LOCALHOST.:{port}/a2a": "never resolved",
    "http://[::1]:{port}/a2a": "never resolved",
    "http://[::ffff:127.0.0.1]:{port}/a2a": "never resolved",
    "http://127.1:{port}/a2a": "shorthand address",
    "http://2130706433:{port}/a2a": "shorthand address",
    "http://0x7f.0.0.1:{port}/a2a": "shorthand address",
    "http://127.000.000.001:{port}/a2a": "shorthand address",
    "http://\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54:{port}/a2a": "not ASCII",
    "http://127.0.0.1.evil.example:{port}/a2a": "never resolved",
    "https://127.0.0.1:{port}/a2a": "scheme",
    "http://127.0.0.1:{other}/a2a": "port",
    "http://127.0.0.1:{port}/a2a/x": "path",
    "http://127.0.0.1:{port}/A2A": "path",
    "http://127.0.0.1:{port}\\@evil.example/a2a": "backslash",
}


def tools_for(tmp_path: Path, listed_url: str) -> Client:
    settings = {"allow_loopback_plaintext": True, "bridge_targets": {NAME: listed_url}}
    return Client(create_server(BuiltinContext(name="a2a", data_dir=tmp_path, settings=settings,
                                               services={"a2a_peers": PeerRegistry()})))


def card_with(interface: str) -> Any:
    def card(port: int) -> dict[str, Any]:
        url = interface.format(port=port, other=port + 1)
        return {**card_at(port, NAME), "supportedInterfaces": [
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]}
    return card


async def verdict_on(tmp_path: Path, interface: str, listed: str = "http://127.0.0.1:{port}/a2a") -> Any:
    async with serving_card(card_with(interface)) as port:
        async with tools_for(tmp_path, listed.format(port=port)) as tools:
            got = await tools.call_tool("a2a_peer_check", {"peer": NAME})
    return got.structured_content


@pytest.mark.parametrize("interface", SAME)
async def test_the_listed_url_spelled_otherwise_is_the_listed_peer(tmp_path: Path, interface: str) -> None:
    verdict = await verdict_on(tmp_path, interface)
    assert verdict["known"] is True, verdict


@pytest.mark.parametrize("interface", list(LOOK_ALIKES), ids=ascii)
async def test_a_look_alike_interface_url_is_refused_with_its_reason(tmp_path: Path, interface: str) -> None:
    verdict = await verdict_on(tmp_path, interface)
    assert verdict["known"] is False and LOOK_ALIKES[interface] in verdict["peer"], verdict


@pytest.mark.parametrize("listed", ["http://127.1:{port}/a2a", "http://2130706433:{port}/a2a",
                                    "http://0x7f000001:{port}/a2a"], ids=ascii)
async def test_a_shorthand_listed_url_is_refused_before_any_fetch(tmp_path: Path, listed: str) -> None:
    """A resolver reads ``127.1`` as 127.0.0.1: the card there must not be fetched as the listed peer's. The
    listing is refused with the settings (tests/a2a/test_a2a_config_urls.py: at load, naming the key), and
    the listed peer's card check refuses it too, before any fetch."""
    async with serving_card(card_with("http://127.0.0.1:{port}/a2a")) as port:
        with pytest.raises(ConfigError, match="bridge_targets.book: .*shorthand address"):
            tools_for(tmp_path, listed.format(port=port))
        async with httpx2.AsyncClient(timeout=5) as http:
            with pytest.raises(PeerRejected, match="shorthand address"):
                await verify_listed(NAME, listed.format(port=port), http, keys=CardKeys.load({}, []),
                                    allow_loopback_plaintext=True)


@pytest.mark.parametrize("listed", ["http://127.0.0.1.:{port}/a2a", "HTTP://127.0.0.1:{port}/a2a/"],
                         ids=ascii)
async def test_a_listed_url_spelled_otherwise_fetches_and_matches(tmp_path: Path, listed: str) -> None:
    verdict = await verdict_on(tmp_path, "http://127.0.0.1:{port}/a2a", listed)
    assert verdict["known"] is True, verdict


@pytest.mark.parametrize(("a", "b"), [("http://localhost./a2a", "http://LOCALHOST:80/a2a"),
                                      ("https://[0:0:0::1]/a2a", "https://[::1]:443/a2a/"),
                                      ("ws://Peer.Example.:80/x", "ws://peer.example/x")], ids=ascii)
def test_the_comparison_is_symmetric_for_spellings_of_one_endpoint(a: str, b: str) -> None:
    assert endpoint_difference(a, b) is None and endpoint_difference(b, a) is None


@pytest.mark.parametrize("interface", list(LOOK_ALIKES), ids=ascii)
def test_an_announced_look_alike_url_cannot_take_a_listed_name(interface: str) -> None:
    """An mDNS announcement calling itself the listed name is refused unless its interface is the listed URL
    (``ListedPeers.refusal``), by the same comparison."""
    listed = ListedPeers({NAME: "http://127.0.0.1:9100/a2a"})
    refusal = listed.refusal([NAME], interface.format(port=9100, other=9101))
    assert refusal is not None and "impostor" in refusal, refusal
