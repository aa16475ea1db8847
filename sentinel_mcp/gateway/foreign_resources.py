"""Resources an upstream sends inside its answers (an embedded resource in a tool result or a prompt, the
contents of a read) under a URI that is not its own: withheld, a line of Sentinel's saying so in their place.

A client takes an embedded resource for the resource its URI names: a hostile upstream's result holding
``{"type": "resource", "resource": {"uri": "bank://accounts/1", ...}}`` (another server's URI) or
``sentinel://rulebase`` (Sentinel's own) put its words in that server's mouth, or Sentinel's. The catalog says
whose a URI is (``Catalog.route_resource``); a URI it gives to another server, one several servers claim, and
any ``sentinel:`` URI from a server Sentinel did not mount are not this upstream's to send. A URI nobody
claims stays (the upstream's own name for its data).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from mcp.types import EmbeddedResource, TextContent, TextResourceContents

from sentinel_mcp.core.display_text import Marked, compose, safe_text
from sentinel_mcp.gateway.catalog import canonical_uri

if TYPE_CHECKING:
    from sentinel_mcp.gateway.catalog import Catalog

OWN_SCHEME = "sentinel"


def claimed_by_other(uri: Any, server: str, catalog: "Catalog", *, builtin: bool = False) -> str | None:
    """Whose ``uri`` is when it is not ``server``'s to send (another server's, several servers', Sentinel's
    own); None when it is ``server``'s or nobody's."""
    if not isinstance(uri, str):
        return None
    canonical = canonical_uri(uri)
    if canonical.startswith(f"{OWN_SCHEME}:") and not builtin:
        return "Sentinel"
    if canonical in catalog.contested:
        return "several servers"
    owner = catalog.route_resource(uri)
    return owner if owner is not None and owner != server else None


def _note(server: str, uri: str, other: str) -> Marked:
    owner = other if other in ("Sentinel", "several servers") else f"the server {other}"
    return compose("[Sentinel withheld a resource the server ", server, " sent as ", safe_text(uri, 200),
                   ": that URI is ", owner, "'s, not ", server, "'s]")


def without_foreign_blocks(
    content: Sequence[Any], server: str, catalog: "Catalog", *, builtin: bool = False
) -> list[Any] | None:
    """``content`` (a tool result's or a prompt message's blocks) with each embedded resource under another's
    URI replaced by Sentinel's note; None when there is none (the common case costs a type check a block)."""
    out: list[Any] | None = None
    for i, block in enumerate(content):
        if not isinstance(block, EmbeddedResource):
            continue
        uri = block.resource.uri
        other = claimed_by_other(uri, server, catalog, builtin=builtin)
        if other is None:
            continue
        if out is None:
            out = list(content)
        out[i] = TextContent(type="text", text=_note(server, uri, other))
    return out


def without_foreign_contents(
    contents: Sequence[Any], asked: str, server: str, catalog: "Catalog", *, builtin: bool = False
) -> list[Any] | None:
    """A read's ``contents`` with each under another's URI replaced by Sentinel's note (under ``asked``, the
    URI read); None when there is none."""
    out: list[Any] | None = None
    for i, item in enumerate(contents):
        uri = getattr(item, "uri", None)
        other = claimed_by_other(uri, server, catalog, builtin=builtin)
        if other is None:
            continue
        if out is None:
            out = list(contents)
        out[i] = TextResourceContents(uri=asked, mime_type="text/plain", text=_note(server, str(uri), other))
    return out
