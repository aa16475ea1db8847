"""The URLs the ``sentinel.a2a`` section names (``bridge_targets``' values, ``peer_tokens``' keys,
``orchestrator_url``), checked when the config loads: a URL that names no endpoint (``endpoint_url``: a
shorthand address, a host that is not ASCII, a space or backslash), that is not http(s), that carries a user
name, password, query or fragment (a credential, or a part the comparison drops so two spellings would pass
for one peer), or a port outside 1-65535 stops the load naming its key, instead of being refused at the first
send. Two listed names for one endpoint are refused too: an agent answering there would be both names.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

from sentinel_mcp.a2a.card_signature import folded_name
from sentinel_mcp.a2a.endpoint_url import Endpoint, NotAnEndpoint, endpoint
from sentinel_mcp.config import loopback_host
from sentinel_mcp.core.display_text import Marked, compose, error_text, safe_text
from sentinel_mcp.core.look_alike_names import looks_alike
from sentinel_mcp.core.url_credentials import without_credentials


def checked_url(url: str, *, credentials: bool = False) -> Endpoint:
    """``url`` as the endpoint a config entry names; ValueError (its message marked) says why it names none.
    ``credentials``: a user name, password or query may be in it (``orchestrator_url``: what it asks for).
    The URL is quoted without them: an error is printed, and they may be secrets."""
    shown = safe_text(without_credentials(url), 200)
    try:
        where = endpoint(url)
    except NotAnEndpoint as e:
        # (the reason quotes only the host or scheme, never the user name, password or query)
        raise ValueError(compose(shown, " names no endpoint: ", error_text(e))) from None
    parts = urlsplit(url)  # (it parsed: endpoint() read it)
    if where.scheme not in ("http", "https"):
        raise ValueError(compose(shown, " is not an http(s) URL (A2A JSON-RPC is over HTTP)"))
    if not credentials and "@" in parts.netloc:
        raise ValueError(compose(shown, " carries a user name or password: a credential goes in "
                                 "sentinel.a2a.peer_tokens, never in a URL"))
    if not credentials and (parts.query or parts.fragment or url.endswith(("?", "#"))):
        raise ValueError(compose(shown, " has a query or fragment: an endpoint is scheme, host, port and "
                                 "path"))
    if where.port == 0:
        raise ValueError(compose(shown, " has port 0, which names no endpoint"))
    return where


def listed_url(url: str) -> str:
    checked_url(url)
    return url


def orchestrator_url(url: str) -> str:
    where = checked_url(url, credentials=True)
    # as an upstream's URL (config.RemoteServer): in plaintext beyond loopback the offers, the token and the
    # answers travel in the clear and anyone on the path answers as the orchestrator. No "off" here: beyond
    # loopback a peer counts only over verified TLS (listed_peer_card, discovery)
    # (the host as written: the canonical one drops a final dot, and "localhost." is looked up in DNS)
    if where.scheme == "http" and not loopback_host(urlsplit(url).hostname):
        raise ValueError(compose(safe_text(without_credentials(url), 200), " is plaintext beyond loopback "
                                 "(offers, their token and the orchestrator's answers would travel in the "
                                 "clear): use https://"))
    return url


def listed_name_clash(targets: Mapping[str, str]) -> tuple[str, Marked] | None:
    """The first ``bridge_targets`` name that makes the listing ambiguous and why, or None: it names the
    endpoint an earlier name names, or is an earlier name folded or a look-alike of it (either would be
    refused as the other when announced: ``listed_peers``)."""
    seen: dict[str, Endpoint] = {}
    for name, url in targets.items():
        here = checked_url(url)
        for earlier, there in seen.items():
            if here == there:
                return name, compose(f"names the endpoint of sentinel.a2a.bridge_targets.{earlier}",
                                     " too: an agent answering there would be two listed names (ambiguous)")
            if folded_name(name) == folded_name(earlier) or looks_alike(name, earlier):
                return name, Marked(f"{safe_text(name, 100)!r} reads as the listed name "
                                    f"{safe_text(earlier, 100)!r}: one of them could never be told apart "
                                    "(ambiguous)")
        seen[name] = here
    return None


def token_spelling_problem(key: str, targets: Mapping[str, str],
                           orchestrator: str | None) -> Marked | None:
    """Why the ``peer_tokens`` key ``key`` would never be sent where it was meant to, or None. A token is
    looked up by the URL exactly as written (a listed URL or its origin: ``mcp_tools.token_for``; the
    orchestrator's URL or that without its last segment: ``orchestrator``): a key naming one of those
    endpoints in another spelling would never be found."""
    entries = [(f"bridge_targets.{n}", [u, _origin_as_sent(endpoint(u))]) for n, u in targets.items()]
    if orchestrator:
        entries.append(("orchestrator_url", [orchestrator, orchestrator.rsplit("/", 1)[0]]))
    if any(key in spellings for _, spellings in entries):
        return None
    here = checked_url(key)
    for where, (url, origin) in entries:
        for written in (url, origin):
            if _names_no_endpoint(written) or here != endpoint(written):
                continue
            return compose(f"names the endpoint of sentinel.a2a.{where} spelled otherwise: a token is found "
                           "by the URL exactly as written, so this one would never be sent; write it as '",
                           safe_text(without_credentials(written), 200), "'")
    return None


def _names_no_endpoint(url: str) -> bool:
    try:
        endpoint(url)
    except NotAnEndpoint:
        return True
    return False


def _origin_as_sent(where: Endpoint) -> str:
    """The origin a listed peer is known by (``listed_peer_card._origin``): its default port left out."""
    default = {"http": 80, "https": 443}[where.scheme]
    return f"{where.scheme}://{where.host}" + (f":{where.port}" if where.port != default else "")
