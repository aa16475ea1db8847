"""How large a record heard on the link may be and still be cached. zeroconf's cache is bounded by count
(10,000 records), not by size, and the announcer chooses a TXT record's size, up to a whole mDNS packet (about
9 KB): a LAN host's 12,000 TXT records of 8.7 KB held +94 MB (measured). RFC 6763 (6.2) advises against TXT
records over 1300 bytes, and an A2A announcement's is a few dozen (``discovery.txt_record``): a larger one
is dropped before it reaches the cache (its name, if an A2A one, then does not resolve: rejected). The other
record types are bounded by DNS itself (a name: 255 bytes)."""

from __future__ import annotations

from typing import Any

MAX_TXT_BYTES = 1300


def drop_oversize(answers: list[Any]) -> None:
    """``answers`` (a response's records, as zeroconf read them) without TXT records over the bound, in place
    (zeroconf's record manager caches from this very list)."""
    from zeroconf import DNSText

    if any(isinstance(r, DNSText) and len(r.text) > MAX_TXT_BYTES for r in answers):
        answers[:] = [r for r in answers if not (isinstance(r, DNSText) and len(r.text) > MAX_TXT_BYTES)]
