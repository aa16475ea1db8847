"""What Sentinel counts as loopback (plaintext allowed, an upstream's hints believed, every question relayed)
must be where the connection surely goes. ``localhost`` is in the hosts file; ``localhost.`` is an absolute
DNS name that the hosts file does not answer for (glibc looks it up in DNS: the network's resolver says
where it is), so an upstream configured at ``http://localhost.:8000`` sent its headers and token in plaintext
to wherever the LAN's DNS pointed, trusted as loopback. Addresses in other spellings are no loopback either
(a shorthand, a mapped IPv6, the unspecified address, a zone): only a loopback address literal or
``localhost``."""

from __future__ import annotations

import pytest

from sentinel_mcp.config import ConfigError, RemoteServer, loopback_host, parse_config
from sentinel_mcp.gateway.annotation_trust import trusts_annotations
from sentinel_mcp.gateway.relay_permits import ALL, permitted_relays

NOT_LOOPBACK = ["localhost.", "LOCALHOST.", "localhost..", "127.0.0.1.", "127.1", "2130706433", "0x7f.1",
                "0177.0.0.1", "0.0.0.0", "::ffff:127.0.0.1", "localhost.localdomain",
                "localhost.evil.example", "127.0.0.1.nip.io", "::1%lo", "", None]
LOOPBACK = ["localhost", "LocalHost", "127.0.0.1", "127.8.9.1", "::1", "[::1]", "0:0:0:0:0:0:0:1"]


@pytest.mark.parametrize("host", NOT_LOOPBACK)
def test_names_and_spellings_that_may_resolve_elsewhere_are_not_loopback(host: str | None) -> None:
    assert not loopback_host(host)


@pytest.mark.parametrize("host", LOOPBACK)
def test_loopback_addresses_and_localhost_are(host: str) -> None:
    assert loopback_host(host)


def test_an_upstream_at_an_address_written_as_an_absolute_name_is_refused_however_sent() -> None:
    """``127.0.0.1.`` is a name a resolver may look up (config_upstream_url.py reads the host as A2A does)."""
    for tls in ({}, {"tls": "off"}):
        with pytest.raises(ConfigError, match="absolute name"):
            parse_config({"mcpServers": {"x": {"url": "http://127.0.0.1.:9/mcp", **tls}}})


@pytest.mark.parametrize("url", ["http://localhost.:9/mcp", "http://LOCALHOST.:9/mcp"])
def test_an_upstream_at_a_dotted_localhost_is_plaintext_beyond_loopback(url: str) -> None:
    with pytest.raises(ConfigError, match="plaintext beyond loopback"):
        parse_config({"mcpServers": {"x": {"url": url}}})
    said_off = RemoteServer(url=url, tls="off")  # the owner accepts plaintext: still not trusted as local
    assert not trusts_annotations(said_off)
    assert permitted_relays(said_off) != ALL
    local = RemoteServer(url="http://localhost:9/mcp")
    assert trusts_annotations(local) and permitted_relays(local) == ALL
