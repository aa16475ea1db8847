"""Whether a text names a host: an IP address or a DNS name as RFC 1123 spells one. A listening address is
checked before anything starts (a space, ``%`` or an unclosed ``[`` would otherwise fail only at bind)."""

from __future__ import annotations

import ipaddress
import re

# ASCII labels of letters, digits and inner hyphens, 63 characters at most
_LABEL = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$")


def is_ipv6(text: str) -> bool:
    try:
        return isinstance(ipaddress.ip_address(text), ipaddress.IPv6Address)
    except ValueError:
        return False


def is_host(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
        return True
    except ValueError:
        pass
    labels = text.removesuffix(".").split(".")
    return 0 < len(text) <= 253 and all(_LABEL.fullmatch(label) for label in labels)
