"""Bytes of HTTP request bodies the front holds (being read, then for as long as their request is served), per
principal against its share and in total.

``WireGuard`` reads a message whole (up to 4 MiB) before anything parses it, and the request keeps it while it
is served. Each connection's body was bounded, the number of connections was not: a principal (any, even one
limited to a single tool) opening a hundred connections and sending 4 MiB on each without its last byte held
360 MB of the gateway's memory, and the body timeout only made it refresh them every 30 s. Past its share a
principal's next bytes are refused (429) and past the total everyone's (503), at once, with a JSON-RPC error;
what is held is given back when its request ends, however it ends.

Caps: ``SENTINEL_CAP_REQUEST_BYTES`` (per principal) and ``SENTINEL_CAP_REQUEST_BYTES_TOTAL``.
"""

from __future__ import annotations

from collections import Counter

from sentinel_mcp.gateway.session_tables import cap

PER_PRINCIPAL = 64 * 1024 * 1024  # sixteen messages of the largest size at once
TOTAL = 512 * 1024 * 1024


class HeldBodies:
    def __init__(self, per_principal: int = PER_PRINCIPAL, total: int = TOTAL) -> None:
        self.per_principal = cap("REQUEST_BYTES", per_principal)
        self.total = cap("REQUEST_BYTES_TOTAL", total)
        self._held: Counter[str] = Counter()
        self._count = 0

    def take(self, who: str, n: int) -> tuple[int, str] | None:
        """Count ``n`` more bytes for ``who``; or, refused, the HTTP status and why (nothing counted)."""
        if self._held[who] + n > self.per_principal:
            return 429, "too many bytes of requests being read or served for this caller; retry when some end"
        if self._count + n > self.total:
            return 503, "too many bytes of requests being read or served; retry later"
        self._held[who] += n
        self._count += n
        return None

    def give_back(self, who: str, n: int) -> None:
        if n <= 0:
            return
        left = self._held[who] - n
        if left > 0:
            self._held[who] = left
        else:
            del self._held[who]
        self._count -= n

    def held(self, who: str | None = None) -> int:
        return self._count if who is None else self._held[who]
