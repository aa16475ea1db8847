"""The audit rows' seal: a keyed MAC over each row's canonical text (key: the cluster's seal key for "audit",
``storage/row_signature.derived_key``), checked by every reader that shows or filters rows by principal.

Why: the chain (``audit_chain.py``) is plain sha256, so whoever can write the store (a replica's database
credentials, a DBA) can edit a row (its ``principal``, its tool) and re-chain every row after it and the
head: the chain walk then passes, and a reader filtering by principal would list the row as that person's.
The MAC needs the key, which the database never holds.

What it covers: the bytes the chain's hash already covers after the previous hash (``audit.canonical``: every
hashed column, principal included), encoded once for both. Not the row's place: a re-chained tail after an
edited row keeps its rows' own MACs (only the edited row is tampered; its place is the chain's and the
anchor's to vouch for, ``audit verify``). A row that fails is "tampered": shown without a principal and
claimed by no principal's filter. A row with no MAC where a key is set (written before one was configured,
or its MAC wiped) is "unsigned", treated the same way. An embedded SQLite store without
``sentinel.cluster.seal_key`` writes no MAC and its readers trust the file (docs/durability.md: a key file in
the data dir would be readable by whoever can write the log beside it; the chain and the anchor kept outside
the data dir guard that file).
"""

from __future__ import annotations

import hmac
from typing import Any, Mapping

from sentinel_mcp.gateway.audit_schema import HASHED

SIGNED, TAMPERED, UNSIGNED = "signed", "tampered", "unsigned"


def seal(key: bytes, body: bytes) -> str:
    """The row's MAC (lower hex) over ``body``: its canonical text as the chain hashes it
    (``audit.encoded``)."""
    return hmac.digest(key, body, "sha256").hex()


def verdict(key: bytes, row: Mapping[str, Any]) -> str:
    """``SIGNED``, ``TAMPERED`` or ``UNSIGNED`` for a row as read (a column -> value mapping, any types): its
    canonical text rebuilt from its columns, then its MAC over it."""
    from sentinel_mcp.gateway.audit import canonical, encoded

    mac = row.get("mac")
    if mac is None:
        return UNSIGNED
    if not isinstance(mac, str):
        return TAMPERED
    try:
        expected = seal(key, encoded(canonical(tuple(row.get(c) for c in HASHED))))
    except (TypeError, ValueError):  # a value no row holds (written in SQL): not what any writer sealed
        return TAMPERED
    # bytes: ``compare_digest`` raises on a non-ASCII str (a hostile row would stop the reader)
    return SIGNED if hmac.compare_digest(mac.encode("utf-8", "replace"), expected.encode()) else TAMPERED
