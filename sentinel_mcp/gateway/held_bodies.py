"""Bytes of HTTP request bodies the MCP front holds (being read, then for as long as their request is served),
per principal against its share and in total (``core/held_bytes.py``).

``WireGuard`` reads a message whole (up to 4 MiB) before anything parses it, and the request keeps it while it
is served. Each connection's body was bounded, the number of connections was not: a principal (any, even one
limited to a single tool) opening a hundred connections and sending 4 MiB on each without its last byte held
360 MB of the gateway's memory, and the body timeout only made it refresh them every 30 s. Past its share a
principal's next bytes are refused (429) and past the total everyone's (503), at once, with a JSON-RPC error;
what is held is given back when its request ends, however it ends.

Caps: ``SENTINEL_CAP_REQUEST_BYTES`` (per principal) and ``SENTINEL_CAP_REQUEST_BYTES_TOTAL``.
"""

from __future__ import annotations

from sentinel_mcp.core.held_bytes import HeldBytes
from sentinel_mcp.core.deployment_caps import cap

PER_PRINCIPAL = 64 * 1024 * 1024  # sixteen messages of the largest size at once
TOTAL = 512 * 1024 * 1024


class HeldBodies(HeldBytes):
    def __init__(self, per_principal: int = PER_PRINCIPAL, total: int = TOTAL) -> None:
        super().__init__(cap("REQUEST_BYTES", per_principal), cap("REQUEST_BYTES_TOTAL", total))
