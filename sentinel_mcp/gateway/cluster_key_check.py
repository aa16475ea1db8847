"""At start, whether this replica's ``sentinel.cluster.seal_key`` is the cluster's.

A replica started with another key ran without complaint: every row it signed was ignored by the others (and
theirs by it) and its audit rows read as tampered. The first replica to start on a database writes one row: a
MAC of a fixed label under a key derived from its seal key. Every later replica checks that row with its own
key and refuses to start when it does not verify, naming the setting (never a key, nor the MAC).

What this is not: a defence against someone who can write the database (they can delete the row, and the next
replica writes its own). It catches a misconfigured replica before it writes anything. Rotating the key means
stopping every replica and deleting the row (``DELETE FROM cluster_key``) before the first one starts again.
A store unreachable at start cannot be checked: the replica starts degraded (as it does for every other shared
table) and says so among its start-up problems; the check runs at its next start.
"""

from __future__ import annotations

import logging

from sentinel_mcp.storage import Schema, StorageError
from sentinel_mcp.storage.location import LocationError
from sentinel_mcp.storage.row_signature import derived_key, sign, signed

log = logging.getLogger(__name__)

PURPOSE = "cluster key check"
LABEL = "sentinel cluster seal key v1"
_SQL = "CREATE TABLE cluster_key (label TEXT PRIMARY KEY, mac TEXT NOT NULL)"
SCHEMA = Schema("cluster_key", {"sqlite": [_SQL], "postgres": [_SQL]})
_READ = "SELECT mac FROM cluster_key WHERE label = ?"
# the first replica's row stands: a later one never overwrites it (that would let a wrong key win)
_WRITE = "INSERT INTO cluster_key (label, mac) VALUES (?, ?) ON CONFLICT (label) DO NOTHING"

MISMATCH = (
    "sentinel.cluster.seal_key is not the key the other replicas on this sentinel.store use (the store holds "
    "a check written with another key): set the same sentinel.cluster.seal_key on every replica. What this "
    "replica signed would be ignored by the others and its audit rows would read as tampered. After changing "
    "the key on every replica on purpose, stop them all and delete the check (DELETE FROM cluster_key) "
    "before the first one starts"
)


async def check_cluster_key(db: object, seal_key: bytes) -> str | None:
    """Raise ``LocationError`` when the store's check was written with another key; write the check when
    there is none. A problem to report (text, no secret) when the store cannot be reached; else None."""
    key = derived_key(seal_key, PURPOSE)
    try:
        await db.migrate(SCHEMA)  # type: ignore[attr-defined]
        rows = await db.query(_READ, (LABEL,))  # type: ignore[attr-defined]
        if not rows:  # the first replica on this database (or the check was deleted)
            await db.write(_WRITE, (LABEL, sign(key, PURPOSE, LABEL)))  # type: ignore[attr-defined]
            rows = await db.query(_READ, (LABEL,))  # type: ignore[attr-defined]
    except StorageError as e:
        log.warning("could not check sentinel.cluster.seal_key against the shared store: %s", e)
        return ("sentinel.cluster.seal_key was not checked against the shared store (unreachable at start); "
                "it is checked at the next start")
    if len(rows) != 1 or not signed(key, rows[0][0], PURPOSE, LABEL):
        raise LocationError(MISMATCH)
    return None
