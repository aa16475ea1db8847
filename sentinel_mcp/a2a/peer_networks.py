"""Where an mDNS announcement may send Sentinel's card fetch (``sentinel.a2a.peer_networks``).

An announcement's addresses and port are whatever its sender says: unbounded, any host on the link could make
Sentinel send requests to any address it can reach (a cloud metadata service, a router's admin page, another
network). A card is fetched only from an announced address inside these networks: the configured ones, or by
default the subnets of the interfaces Sentinel browses on (the local link). Loopback is among them only when a
browsed interface is loopback (or every interface, ``0.0.0.0``): an announcement heard on a LAN that names
``127.0.0.1`` would aim the fetch at this machine's own services (a console, PostgreSQL, an adb server).
"""

from __future__ import annotations

import ipaddress
import logging

from sentinel_mcp.core.untrusted_address import AddressRefused, Kind, classify, parse_address

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"))
log = logging.getLogger(__name__)


def parse_networks(texts: list[str]) -> tuple[IPNetwork, ...]:
    """CIDR texts (``192.168.1.0/24``; an address alone is its /32 or /128). ValueError names a bad one."""
    found = []
    for text in texts:
        try:
            found.append(ipaddress.ip_network(text, strict=False))
        except ValueError:
            raise ValueError(f"{text!r} is not a network (CIDR such as 192.168.1.0/24)") from None
    return tuple(found)


def _link_of(interface: str) -> list[IPNetwork]:
    """The subnets of the interface holding address ``interface`` (every interface's for 0.0.0.0)."""
    import ifaddr

    found: list[IPNetwork] = []
    for adapter in ifaddr.get_adapters():
        for ip in adapter.ips:
            if not isinstance(ip.ip, str):
                continue  # (IPv6: the browser is IPv4 only)
            if interface in ("0.0.0.0", ip.ip):
                found.append(ipaddress.ip_network(f"{ip.ip}/{ip.network_prefix}", strict=False))
    return found


def _browses_loopback(interface: str) -> bool:
    try:
        ip = ipaddress.ip_address(interface)
    except ValueError:
        return False
    return ip.is_loopback or ip.is_unspecified


def default_networks(interfaces: list[str]) -> tuple[IPNetwork, ...]:
    """The subnets of the browsed interfaces; loopback only when loopback (or ``0.0.0.0``) is browsed."""
    networks: list[IPNetwork] = list(LOOPBACK) if any(map(_browses_loopback, interfaces)) else []
    for interface in interfaces:
        try:
            networks.extend(n for n in _link_of(interface) if n not in networks)
        except OSError as e:  # (an interface list the OS will not give: no subnet of it, said once)
            log.warning("cannot read the subnet of %s (%s): no card is fetched on its link", interface, e)
    return tuple(networks)


def names_this_host(address: str) -> bool:
    """Whether a connection to ``address`` reaches this machine whatever its interfaces: loopback, or the
    unspecified address (a connect to 0.0.0.0 or :: goes to the local host), as ``untrusted_address`` reads
    and classifies it (an IPv4-mapped IPv6 address as its IPv4 one). One it cannot read counts (refused
    anyway)."""
    try:
        return classify(parse_address(address)) is Kind.THIS_HOST
    except AddressRefused:
        return True


def allowed(address: str, networks: tuple[IPNetwork, ...]) -> bool:
    """Whether ``address`` is one address inside ``networks``, read by ``untrusted_address`` (one spelling:
    no zone, no shorthand; an IPv4-mapped IPv6 address as the IPv4 one it reaches). ``ipaddress`` alone read
    ``::1%<zone>`` with any zone text but ``%``: ``::1%x]@169.254.169.254#`` was loopback here and, put in a
    URL's brackets, named the metadata service as host."""
    try:
        ip = parse_address(address)
    except AddressRefused:
        return False
    return any(ip.version == n.version and ip in n for n in networks)
