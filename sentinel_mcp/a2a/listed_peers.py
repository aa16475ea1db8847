"""Peers the owner lists in the config by name and address (``sentinel.a2a.bridge_targets``: name -> its
JSON-RPC URL). Such a name is the owner's word, not an announcement's, so it stays that peer's whatever anyone
on the link announces, in whatever order.

An agent announced over mDNS whose card's name or mDNS instance reads as a listed name is refused:
- when it folds to it (case, compatibility forms: "BOOK", full-width letters: ``card_signature.folded_name``)
  and its card's JSON-RPC interface is not the listed URL (the listed peer itself, announced, is taken);
- when it only reads alike ("ВООК" in Cyrillic capitals, "B00K" with zeros: ``core/look_alike_names.py``),
  always: a look-alike of a listed name is nobody's name.
Each announcement is held against the config, never against the other announcements, so their order changes
nothing: an impostor announced first does not take the name, nor does one announced last make it find nobody.
Names the config does not list keep the rule of equals (``PeerRegistry.find``): two announced look-alikes are
ambiguous, found by neither name. (``peer_keys`` pins a name to a key instead: ``card_signature.py``.)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from sentinel_mcp.a2a.card_signature import folded_name
from sentinel_mcp.a2a.endpoint_url import same_endpoint
from sentinel_mcp.core.display_text import Marked, safe_text
from sentinel_mcp.core.look_alike_names import looks_alike


@dataclass(frozen=True)
class ListedPeers:
    urls: Mapping[str, str] = field(default_factory=dict)  # a listed name, as configured -> its JSON-RPC URL

    def refusal(self, names: list[str], rpc_url: str) -> str | None:
        """Why an announced agent known by ``names`` (its card's name, its mDNS instance label) and answering
        at ``rpc_url`` must not be taken, for a name the config lists; None when no listed name says so."""
        for name in names:
            for listed, url in self.urls.items():
                if folded_name(name) == folded_name(listed):
                    if not same_endpoint(url, rpc_url):
                        return Marked(f"its name {safe_text(name, 100)!r} is the listed peer "
                                      f"{safe_text(listed, 100)!r}, which sentinel.a2a.bridge_targets places "
                                      "elsewhere (an impostor of its name)")
                elif looks_alike(name, listed):
                    return Marked(f"its name {safe_text(name, 100)!r} looks like the listed peer "
                                  f"{safe_text(listed, 100)!r} (sentinel.a2a.bridge_targets) but is not that "
                                  "name (a look-alike)")
        return None

    def reads_as(self, name: str) -> str | None:
        """The listed name ``name`` only reads as (folds to, or looks like) without being it, or None: a send
        by such a name reaches nobody, rather than the listed peer or a look-alike of it."""
        if name in self.urls:
            return None
        for listed in self.urls:
            if folded_name(name) == folded_name(listed) or looks_alike(name, listed):
                return listed
        return None


NO_LISTED = ListedPeers()
