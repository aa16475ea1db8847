"""``core/untrusted_address.py`` over generated tables (hypothesis is not in the venv: a seeded generator, the
same tables each run): every spelling of one address reads as that address or is refused, never as another;
its class agrees with ``ipaddress`` on the canonical form; names, zones, shorthands and non-ASCII are read
as the module says."""

from __future__ import annotations

import ipaddress
import random

import pytest

from sentinel_mcp.core.untrusted_address import (AddressRefused, Kind, canonical, classify, parse_address,
                                                 parse_host, stays_here)

SEED = 20261205
# prefixes where the classes are decided, plus anywhere
V4_PREFIXES = ["0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
               "192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24",
               "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4", "255.255.255.255/32", "0.0.0.0/0"]
V6_PREFIXES = ["::/128", "::1/128", "fe80::/10", "fc00::/7", "ff00::/8", "2001:db8::/32", "fec0::/10",
               "2000::/3", "::/96", "64:ff9b::/96", "2002::/16"]


IP = ipaddress.IPv4Address | ipaddress.IPv6Address


def _sample(prefixes: list[str], n: int, rng: random.Random) -> list[IP]:
    out = []
    for _ in range(n):
        net = ipaddress.ip_network(rng.choice(prefixes))
        out.append(net[rng.randrange(net.num_addresses)])
    return out


RNG = random.Random(SEED)
V4 = _sample(V4_PREFIXES, 600, RNG)
V6 = _sample(V6_PREFIXES, 400, RNG)


def _same_spellings(ip: ipaddress.IPv4Address) -> list[str]:
    """Spellings that name exactly ``ip`` and are read as it."""
    a, b, c, d = ip.packed
    hi, lo = (a << 8) | b, (c << 8) | d
    return [str(ip), f"::ffff:{ip}", f"[::ffff:{ip}]", f"::FFFF:{hi:x}:{lo:x}",
            f"0:0:0:0:0:ffff:{hi:X}:{lo:X}", f"[0000:0000:0000:0000:0000:FFFF:{ip}]"]


def _shorthands(ip: ipaddress.IPv4Address) -> list[str]:
    """Spellings some resolver reads as ``ip`` (or another address) and that are not four decimal numbers."""
    a, b, c, d = ip.packed
    return [str(int(ip)), hex(int(ip)), f"0{int(ip):o}", f"0{a:o}.0{b:o}.0{c:o}.0{d:o}",
            f"0x{a:x}.0x{b:x}.0x{c:x}.0x{d:x}", f"{a}.{b}.{(c << 8) | d}", f"{a}.{(b << 16) | (c << 8) | d}",
            f"{a:03d}.{b:03d}.{c:03d}.{d:03d}" if min(a, b, c, d) < 100 else f"0{a}.{b}.{c}.{d}", f"{ip}."]


def _expected(ip: IP) -> set[Kind]:
    """The classes ``ipaddress`` allows for ``ip`` (canonical): a relation, not the module's own rules."""
    if ip.is_loopback or ip.is_unspecified or (ip.version == 4 and int(ip) >> 24 == 0):
        return {Kind.THIS_HOST}
    if ip.is_multicast:
        return {Kind.MULTICAST}
    if ip.is_link_local:
        return {Kind.LINK_LOCAL}
    if ip.version == 6 and ip in ipaddress.ip_network("::/96"):
        return {Kind.RESERVED}  # (deprecated IPv4-compatible: ipaddress calls some global, none routes)
    if ip.is_global:
        return {Kind.GLOBAL}
    return {Kind.PRIVATE, Kind.DOCUMENTATION, Kind.RESERVED}


def test_every_spelling_of_an_ipv4_address_reads_as_it_and_every_shorthand_is_refused() -> None:
    for ip in V4:
        for spelling in _same_spellings(ip):
            assert parse_host(spelling).address == ip, spelling
        for spelling in _shorthands(ip):
            if spelling == str(ip):
                continue  # (a quad whose numbers are all three digits already: the plain spelling)
            with pytest.raises(AddressRefused):
                parse_host(spelling)


def test_the_class_agrees_with_ipaddress_on_the_canonical_form() -> None:
    for ip in [*V4, *V6]:
        seen = canonical(ip)
        kind = classify(ip)
        carried = (ip.version == 6 and (ip in ipaddress.ip_network("64:ff9b::/96")
                                        or ip in ipaddress.ip_network("2002::/16")))
        if not carried:
            assert kind in _expected(seen), (ip, kind)
        # every spelling of it is the same class
        if seen.version == 4:
            assert {parse_host(s).kind for s in _same_spellings(seen)} == {kind}, ip


def test_an_ipv4_address_carried_in_ipv6_is_judged_as_that_address() -> None:
    for ip in V4:
        inner = classify(ip)
        nat64 = ipaddress.IPv6Address(int(ipaddress.IPv6Address("64:ff9b::")) | int(ip))
        if inner is not Kind.GLOBAL:
            assert classify(nat64) is inner, (ip, nat64)
            if not ip.is_unspecified:
                six_to_four = ipaddress.IPv6Address((0x2002 << 112) | (int(ip) << 80) | 1)
                assert classify(six_to_four) is inner, (ip, six_to_four)


def test_ipv6_spellings_read_as_one_address_and_zones_are_refused() -> None:
    for ip in V6:
        for spelling in (ip.compressed, ip.exploded, ip.exploded.upper(), f"[{ip.compressed}]"):
            assert parse_host(spelling).address == canonical(ip), spelling
        assert parse_address(ip.compressed) == canonical(ip)
        with pytest.raises(AddressRefused, match="brackets"):
            parse_address(f"[{ip.compressed}]")
        for zoned in (f"{ip.compressed}%eth0", f"[{ip.compressed}%25lo]",
                      f"{ip.compressed}%x]@169.254.169.254#"):
            with pytest.raises(AddressRefused, match="zone"):
                parse_host(zoned)


@pytest.mark.parametrize("text", ["ПРИМЕР.local", "ехаmple.com", "a..b", ".a", "a_b-.c", "user@host",
                                  "host:80", "host/path", "host name", "host\tx", "ho%73t", "-peer", "",
                                  "a" * 64 + ".b"])
def test_what_is_no_host_name_is_refused(text: str) -> None:
    with pytest.raises(AddressRefused):
        parse_host(text)


def test_names_are_names() -> None:
    assert parse_host("Peer-1.Local") == ("peer-1.local" and parse_host("peer-1.local"))
    assert parse_host("peer-1.local").name == "peer-1.local" and parse_host("peer-1.local").address is None
    assert parse_host("xn--e1afmkfd.example").name == "xn--e1afmkfd.example"  # (already ASCII: as written)
    assert parse_host("localhost.").absolute and not parse_host("localhost").absolute


@pytest.mark.parametrize("text,here", [
    ("127.0.0.1", True), ("127.8.9.10", True), ("::1", True), ("[::1]", True), ("::ffff:127.0.0.1", False),
    ("localhost", True), ("LOCALHOST", True), ("localhost.", False), ("127.1", False), ("2130706433", False),
    ("0x7f.0.0.1", False), ("::1%lo", False), ("0.0.0.0", False), ("10.0.0.1", False), ("::7f00:1", False),
    ("127.0.0.1.", False), (None, False), ("", False), ("localhost.localdomain", False)])
def test_stays_here(text: str | None, here: bool) -> None:
    assert stays_here(text) is here
