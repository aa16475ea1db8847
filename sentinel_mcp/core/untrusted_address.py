"""Hosts someone else chose (an mDNS announcement, an agent card, a URL a peer or a config names): read once,
in one way, and classified by where a connection to them would go.

Resolvers and URL parsers disagree on spellings, and each disagreement was a way past a check: ``2130706433``,
``0x7f.1``, ``0177.0.0.1`` and ``127.1`` are 127.0.0.1 to ``inet_aton`` but no address to ``ipaddress``;
``::ffff:127.0.0.1`` reaches 127.0.0.1 yet is no loopback to ``ipaddress`` (before Python 3.13);
``::1%x]@169.254.169.254#`` read as ``::1`` with a zone; ``127.0.0.1.`` and ``localhost.`` are names a
resolver looks up. So:

- an address literal is four decimal numbers (no leading zeros) or an IPv6 address (brackets taken off); an
  IPv4-mapped IPv6 address is its IPv4 address (what a connection reaches); a zone is refused;
- a host whose last label is a number in any base but is no such literal is refused (a shorthand: some
  resolver reads it as some address, Sentinel does not guess which);
- a name is ASCII (IDNA would map another spelling onto it), lowercased, of LDH labels (letters, digits,
  hyphens, underscores), without user info, port, path, percent-escapes, spaces or controls; one trailing dot
  is kept apart (``absolute``): ``localhost.`` is not the hosts file's ``localhost``;
- an address is classified once (``Kind``): this host (loopback, unspecified, 0.0.0.0/8), link-local,
  private (RFC 1918, unique-local, shared 100.64/10), multicast, documentation, reserved, or global; an
  address that carries an IPv4 one (NAT64 64:ff9b::/96, 6to4 2002::/16) is classified as that one when it
  is not global.
"""

from __future__ import annotations

import enum
import ipaddress
import re
from typing import NamedTuple

from sentinel_mcp.core.display_text import compose, safe_text
from sentinel_mcp.core.errors import AddressError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_DECIMAL_QUAD = re.compile(r"(0|[1-9][0-9]{0,2})(\.(0|[1-9][0-9]{0,2})){3}")
_NUMBER = re.compile(r"(0x[0-9a-f]*|[0-9]+)")  # a label a resolver reads as a number (decimal, octal, hex)
_LABEL = re.compile(r"[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?")


class AddressRefused(AddressError, ValueError):
    """A host that names nothing Sentinel can check (its message says why)."""


class Kind(enum.Enum):
    THIS_HOST = "this host"  # loopback, unspecified, 0.0.0.0/8: a connection stays on this machine
    LINK_LOCAL = "link-local"  # 169.254/16 (the metadata services), fe80::/10
    PRIVATE = "private"  # RFC 1918, fc00::/7, 100.64/10
    MULTICAST = "multicast"
    DOCUMENTATION = "documentation"  # 192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32
    RESERVED = "reserved"  # 240/4, broadcast, IPv4-compatible ::/96, site-local fec0::/10, benchmarking...
    GLOBAL = "global"


class Host(NamedTuple):
    """A host read: ``address`` (canonical: an IPv4-mapped one as IPv4) or ``name`` (lowercase ASCII)."""

    address: IPAddress | None
    name: str | None
    absolute: bool = False  # the name was written with a trailing dot (looked up in DNS as it is)
    mapped: bool = False  # the address was written as IPv4-mapped IPv6 (``address`` is the IPv4 one)

    @property
    def kind(self) -> Kind | None:
        return classify(self.address) if self.address is not None else None

    def __str__(self) -> str:
        if self.address is not None:
            return f"[{self.address}]" if self.address.version == 6 else str(self.address)
        return f"{self.name}{'.' if self.absolute else ''}"


_DOCUMENTATION = tuple(map(ipaddress.ip_network, (
    "192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32")))
_SHARED = ipaddress.ip_network("100.64.0.0/10")
_THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_SIX_TO_FOUR = ipaddress.ip_network("2002::/16")
_COMPATIBLE = ipaddress.ip_network("::/96")


def canonical(ip: IPAddress) -> IPAddress:
    """The address a connection to ``ip`` reaches: an IPv4-mapped IPv6 address is its IPv4 one."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def _own_kind(ip: IPAddress) -> Kind:
    if ip.is_loopback or ip.is_unspecified or ip in _THIS_NETWORK:
        return Kind.THIS_HOST
    if ip.is_multicast:
        return Kind.MULTICAST
    if ip.is_link_local:
        return Kind.LINK_LOCAL
    if any(ip in n for n in _DOCUMENTATION if n.version == ip.version):
        return Kind.DOCUMENTATION
    if ip in _SHARED or (ip.is_private and (ip.version == 6 and ip in ipaddress.ip_network("fc00::/7")
                                           or ip.version == 4 and any(ip in n for n in _RFC1918))):
        return Kind.PRIVATE
    if ip.version == 6 and ip in _COMPATIBLE:  # (deprecated IPv4-compatible: :: and ::1 are above)
        return Kind.RESERVED
    if ip.is_global:
        return Kind.GLOBAL
    return Kind.RESERVED  # what ipaddress calls neither global nor one of the above (240/4, fec0::/10, ...)


_RFC1918 = tuple(map(ipaddress.ip_network, ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")))


def classify(ip: IPAddress) -> Kind:
    """Where a connection to ``ip`` goes (``Kind``), an IPv4 address carried in an IPv6 one included."""
    ip = canonical(ip)
    kind = _own_kind(ip)
    if isinstance(ip, ipaddress.IPv6Address):
        carried = (ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF) if ip in _NAT64
                   else ip.sixtofour if ip in _SIX_TO_FOUR else None)
        if carried is not None:
            inner = _own_kind(carried)
            return inner if inner is not Kind.GLOBAL else kind
    return kind


def _refused(host: str, why: str) -> AddressRefused:
    return AddressRefused(compose("host '", safe_text(host, 100), f"' {why}"))


def _v6(ip: ipaddress.IPv6Address) -> Host:
    return Host(canonical(ip), None, mapped=ip.ipv4_mapped is not None)


def parse_host(text: str) -> Host:
    """``text`` (a URL's host as ``urlsplit().hostname`` or netloc gives it, brackets allowed) read once;
    AddressRefused says why it names nothing checkable."""
    if not text:
        raise _refused(text, "is empty")
    if not text.isascii():
        raise _refused(text, "is not ASCII (IDNA would read a look-alike spelling as another name)")
    host = text.lower()
    if host.startswith("[") and host.endswith("]"):
        inner = host[1:-1]
        if "%" in inner:
            raise _refused(text, "carries a zone (an interface name is no part of an address)")
        try:
            return _v6(ipaddress.IPv6Address(inner))
        except ValueError:
            raise _refused(text, "is no IPv6 address inside its brackets") from None
    if ":" in host:
        if "%" in host:
            raise _refused(text, "carries a zone (an interface name is no part of an address)")
        try:
            return _v6(ipaddress.IPv6Address(host))
        except ValueError:
            raise _refused(text, "is no IPv6 address (a colon: a port or user info in a host)") from None
    absolute = host.endswith(".")
    bare = host[:-1] if absolute else host
    labels = bare.split(".")
    if _NUMBER.fullmatch(labels[-1]):
        if not _DECIMAL_QUAD.fullmatch(bare):
            raise _refused(text, "is a shorthand address, not four decimal numbers: resolvers read it as "
                                 "some address")
        if absolute:
            raise _refused(text, "is an address written as an absolute name (a trailing dot): a resolver "
                                 "may look it up")
        try:
            return Host(ipaddress.IPv4Address(bare), None)
        except ValueError:
            raise _refused(text, "is no address (a number over 255)") from None
    if len(bare) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        raise _refused(text, "is not a host name (letters, digits, hyphens and dots)")
    return Host(None, bare, absolute)


def parse_address(text: str) -> IPAddress:
    """``text`` as an address literal, bare (no brackets: an address as a resolver or mDNS gives it),
    read as ``parse_host`` reads it; AddressRefused when it is none."""
    if text.startswith("["):
        raise _refused(text, "is an address in brackets (a URL's spelling, not an address's)")
    host = parse_host(text)
    if host.address is None:
        raise _refused(text, "is a name, not an address")
    return host.address


def stays_here(text: str | None) -> bool:
    """Whether a connection to the host ``text`` surely stays on this machine: a loopback address in its one
    spelling, or ``localhost`` (the hosts file's, not the absolute DNS name ``localhost.``). Not an
    IPv4-mapped one: it reaches 127.0.0.1 only where the stack maps it (trust as local takes no such
    condition)."""
    try:
        host = parse_host(text or "")
    except AddressRefused:
        return False
    if host.address is None:
        return host.name == "localhost" and not host.absolute
    return host.address.is_loopback and not host.mapped
