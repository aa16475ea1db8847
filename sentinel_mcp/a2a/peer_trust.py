"""Whether a peer may be sent the user's data, as a fact the sending guard reads (``rulebases/a2a.pl``).

A peer whose card a pinned or trusted key verified (``card_signature.py``) is who it says; any other one is
who it says only by its own word (anyone on the link can announce a look-alike), so sending to it needs the
user's yes, naming it, its address and its card's key, or is refused
(``sentinel.a2a.require_verified_peers``). The guard reads the verdict from ``a2a_peer_check`` (read-only,
called by the solver), never from the call's arguments. The verdict is of one card: the digest reported is
noted per name, and a send whose peer's card is not the one last reported (fetched again and changed after the
guard looked) is refused.

The verdict's "peer" text is Sentinel's, with what the peer announced in it as quoted values
(``quoted_values``): data the guard reads (JSON, then a Prolog fact) and shows as it is (``text(Shown)`` in
``rulebases/a2a.pl``: never quoted again), made safe where it is asked (``safe_question``): it goes raw
(``unmarked``), so the question marks each character once. The refusals, raised to the caller, are
Sentinel's text, marked here.
"""

from __future__ import annotations

from typing import Any

from sentinel_mcp.a2a.discovery import Peer, PeerRegistry
from sentinel_mcp.core.display_text import Marked, compose, safe_text, unmarked
from sentinel_mcp.core.quoted_values import readable_text

MAX_CHECKED = 1000  # (session, name) pairs whose last verdict is remembered (the oldest go first)


def shown_peer(peer: Peer) -> Marked:
    """The peer in plain words for a person: its card's name, its mDNS instance, where it answers, its key.
    What the peer announced reads as quoted values (``quoted_values``): a card named ``bob" (announced as
    bank) at https://bank...`` cannot pass for the words around it, in the question or in a refusal."""
    key = (f"its card is signed by key sha256:{readable_text(peer.trust.key, 100)}" if peer.trust.key
           else _signer(peer.trust.note))
    return compose(_shown(peer.card.name, 100), " (announced as ", _shown(peer.instance, 120), ") at ",
                   _shown(peer.rpc_url, 300), "; ", safe_text(key, 400), f" (card sha256:{peer.digest[:16]})")


def _shown(value: str, limit: int) -> Marked:
    # quoted, then marked (never cut here: the limit of readable_text already did, outside the quote)
    return safe_text(readable_text(value, limit), 3 * limit)


def _signer(note: str) -> str:
    """What an unverified card's signature says (its note names the signer's key when the header does)."""
    mark = "signed by key sha256:"
    if mark in note:
        signer = note.split(mark, 1)[1].split(" ", 1)[0]
        return "its card is signed by key sha256:" + readable_text(signer, 100)
    return "its card is not signed by any key Sentinel knows"


def check(registry: PeerRegistry, peer_name: str, *, refuse_unverified: bool, seen_by: str | None
          ) -> dict[str, Any]:
    """The verdict on the peer ``peer_name`` finds now; ``seen_by``: the session whose guard reads it (the
    solver's read, noted as what that session's next send was decided on), None for anyone else's look (a
    client's own call notes nothing: it must not stand in for what the guard saw)."""
    return verdict(registry, peer_name, registry.find(peer_name), refuse_unverified=refuse_unverified,
                   seen_by=seen_by)


def verdict(registry: PeerRegistry, peer_name: str, found: Peer | None, *, refuse_unverified: bool,
            seen_by: str | None, why_unknown: str | None = None) -> dict[str, Any]:
    """The verdict on ``found``, the peer ``peer_name`` names now (announced, or listed:
    ``listed_peer_card``), noted for ``seen_by`` as ``check`` says; ``why_unknown``: why there is none."""
    if found is None:
        return {"known": False, "verified": False, "refuse_unverified": refuse_unverified,
                "peer": unmarked(why_unknown or compose("no listed peer ", _shown(peer_name, 100)))}
    if seen_by is not None:
        registry.checked.pop((seen_by, peer_name), None)
        registry.checked[(seen_by, peer_name)] = found.digest
    while len(registry.checked) > MAX_CHECKED:
        del registry.checked[next(iter(registry.checked))]
    return {"known": True, "verified": found.trust.verified, "refuse_unverified": refuse_unverified,
            "peer": unmarked(shown_peer(found)), "card": found.digest}


def refusal(registry: PeerRegistry, session: str, peer_name: str, target: Peer, *, refuse_unverified: bool,
            guarded: bool = True) -> Marked | None:
    """Why a send to ``target`` (what ``peer_name`` finds now) must not go, or None. The guard asked the user
    about the card it was shown; another card under the name (fetched again since) is not what they said yes
    to, nor is a verified verdict on an older card one on this."""
    if refuse_unverified and not target.trust.verified:
        return compose(shown_peer(target), ": its card is unverified, and "
                       "sentinel.a2a.require_verified_peers refuses unverified peers")
    seen = registry.checked.get((session, peer_name))
    if guarded and seen is None and not target.trust.verified:
        # through the gateway, an unverified peer is sent to only as the guard of sending decided, on its
        # verdict (a config without rulebases/a2a.pl, or an allow list, must not send to it unasked)
        return compose(shown_peer(target), ": its card is unverified, and no guard of sending checked it in "
                       "this session (load rulebases/a2a.pl: it asks the user)")
    if seen is not None and seen != target.digest:
        return Marked(f"the card of {safe_text(peer_name, 100)!r} changed after the guard checked it: "
                      "nothing was sent; send again to have the new card checked")
    return None
