"""Whether two URLs name one A2A endpoint (a listed URL and a card's interface, an announced address and a
card's), decided on the URLs as written, never by resolving a name: scheme, host, port and path compared in
one canonical form.

- scheme lowercased, one of http/https/ws/wss; the port explicit (a default one spelled out: 80/443);
- host lowercased, one trailing dot dropped (``localhost.`` is ``localhost``), an address in its canonical
  spelling (``[0:0::1]`` is ``[::1]``); a name stays a name: ``localhost`` is not ``127.0.0.1`` nor ``[::1]``
  (which one a resolver picks is its word, not the URL's);
- a host whose last label is a number but that is no four-part decimal address (``127.1``, ``2130706433``,
  ``0x7f.0.0.1``, ``127.000.000.001``) is refused: resolvers read such shorthands as some address, so it
  names no host Sentinel can compare;
- a host that is not ASCII is refused (IDNA would map it to another name: a look-alike spelling);
- path with a trailing slash dropped; user name, password, query and fragment do not say where it answers.

What is sent to is built from the endpoint that was checked (``sent_url``), never a card's spelling of it.
"""

from __future__ import annotations

import ipaddress
import re
from typing import NamedTuple
from urllib.parse import urlsplit

from sentinel_mcp.core.errors import A2AError
from sentinel_mcp.core.display_text import Marked, compose, safe_text
from sentinel_mcp.core.untrusted_address import AddressRefused, parse_host

_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
_UNSAFE = re.compile(r"[\x00-\x20\x7f\\]")  # spaces, controls, backslashes: parsers disagree on them


class NotAnEndpoint(A2AError, ValueError):
    """A URL that names no endpoint Sentinel can compare (its message says why)."""


class Endpoint(NamedTuple):
    scheme: str
    host: str  # canonical: a lowercased name, or an address (IPv6 in brackets)
    port: int
    path: str

    def __str__(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}{self.path}"


def canonical_host(host: str) -> str:
    """``host`` (as ``urlsplit().hostname`` gives it) in canonical form; NotAnEndpoint when it has none."""
    if not host:
        raise NotAnEndpoint("it has no host")
    name = host.lower()
    name = name[:-1] if name.endswith(".") else name  # (compared as written: sent to the checked endpoint)
    try:  # the one reading of a host someone else wrote: shorthand, zone, non-ASCII, not a name (refused)
        read = parse_host(name if name.isascii() else host)
    except AddressRefused as e:
        raise NotAnEndpoint(compose("its ", *e.args[:1])) from None
    if read.address is None:
        return name
    # an address as written (an IPv4-mapped one stays IPv6: a card naming it names another endpoint)
    address = ipaddress.ip_address(name)
    return f"[{address.compressed}]" if address.version == 6 else address.compressed


def endpoint(url: str) -> Endpoint:
    """``url`` as an endpoint; NotAnEndpoint says why it is none."""
    if _UNSAFE.search(url):
        raise NotAnEndpoint("it holds a space, control character or backslash")
    try:
        parts = urlsplit(url)
        port = parts.port
        host = parts.hostname or ""
    except ValueError as e:
        raise NotAnEndpoint(f"it does not parse ({e})") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise NotAnEndpoint(compose("its scheme '", safe_text(scheme, 20), "' is not http(s) or ws(s)"))
    return Endpoint(scheme, canonical_host(host), port if port is not None else _DEFAULT_PORTS[scheme],
                    parts.path.rstrip("/") or "/")


def sent_url(url: str, at: Endpoint) -> str:
    """The URL Sentinel sends to for ``url`` (a card's interface) once it was found to name the checked
    endpoint ``at``: ``at``'s scheme, canonical host and port with ``url``'s path and query. A card's own
    spelling of the host is never sent to: ``127.0.0.1.`` and ``localhost.`` compare as the address and the
    name, yet neither is resolved as one (no address literal, no hosts-file entry: the network's resolver
    says where they are); its user name, password and fragment are its writer's words, not where it answers.
    """
    parts = urlsplit(url)
    query = f"?{parts.query}" if parts.query else ""
    return f"{at.scheme}://{at.host}:{at.port}{parts.path or '/'}{query}"


def _why(e: NotAnEndpoint) -> Marked:
    said = e.args[0] if e.args else ""
    return said if isinstance(said, Marked) else compose(str(said))


def endpoint_difference(a: str, b: str) -> Marked | None:
    """Why ``a`` is not the endpoint ``b`` names (in words for a person, marked), or None when it is."""
    try:
        ea = endpoint(a)
    except NotAnEndpoint as e:
        return compose(safe_text(a, 200), " is no endpoint: ", _why(e))
    try:
        eb = endpoint(b)
    except NotAnEndpoint as e:
        return compose(safe_text(b, 200), " is no endpoint: ", _why(e))
    for what, x, y in zip(Endpoint._fields, ea, eb):
        if x != y:
            why = " (host names are compared as written, never resolved)" if what == "host" else ""
            return compose(f"its {what} '", safe_text(str(x), 100), "' is not '", safe_text(str(y), 100),
                           f"'{why}")
    return None


def same_endpoint(a: str, b: str) -> bool:
    return endpoint_difference(a, b) is None
