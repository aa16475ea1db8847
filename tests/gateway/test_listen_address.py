"""``serve --http [HOST:]PORT``: an address that names no host (``[::1`` unclosed, a space, ``%``, two ports)
is refused at once with the argument quoted, instead of being taken for a host name (and refused as "beyond
loopback" under a mangled name, or with "tls": "off" failing to resolve after everything had started)."""

from __future__ import annotations

import pytest

from sentinel_mcp.app.listen_address import parse_listen


@pytest.mark.parametrize("value", ["[::1", "[::1]x:80", "bad host:80", "%:80", "127.0.0.1:80:90", "[]:80",
                                   "[127.0.0.1]:80", "é.example:80", "-x.example:80", "a..b:80", "[::1]]:80"])
def test_an_address_that_names_no_host_is_refused(value: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_listen(value)
    assert "--http" in str(err.value) and repr(value) in str(err.value), str(err.value)


@pytest.mark.parametrize(("value", "host", "port"), [
    ("8765", "127.0.0.1", 8765), ("0.0.0.0:80", "0.0.0.0", 80), ("[::1]:80", "::1", 80),
    ("localhost:80", "localhost", 80), ("gw-1.example.org:443", "gw-1.example.org", 443),
    (":80", "127.0.0.1", 80), ("::1:80", "::1", 80),
])
def test_good_addresses_still_parse(value: str, host: str, port: int) -> None:
    assert parse_listen(value) == (host, port)
    assert parse_listen("80", "[::1]") == ("::1", 80)  # sentinel.http.host may bracket an IPv6 address


@pytest.mark.parametrize("host", ["bad host", "%", "[::1", "", "é.example"])
def test_a_config_host_that_names_nothing_stops_the_load(host: str) -> None:
    from sentinel_mcp.config import ConfigError, parse_config

    with pytest.raises(ConfigError) as err:
        parse_config({"sentinel": {"http": {"host": host}}}, source="cfg.json")
    assert "sentinel.http.host" in str(err.value), str(err.value)


@pytest.mark.parametrize("host", ["127.0.0.1", "0.0.0.0", "::", "[::1]", "localhost", "gw.example.org"])
def test_a_config_host_that_names_one_loads(host: str) -> None:
    from sentinel_mcp.config import parse_config

    assert parse_config({"sentinel": {"http": {"host": host}}}).sentinel.http.host == host
