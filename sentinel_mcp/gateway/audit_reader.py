"""The audit record a config's gateway writes, read back: the cluster's table on a server store
(``sentinel.store = "postgresql://…"``: every replica's chain), else the store's SQLite files (every
instance's log). One place, so no reader (``sentinel-mcp audit``, ``replay``) reads the data dir's files
while the gateway writes elsewhere: a replay of a cluster's record once read the files (none, or an old
embedded log) and replayed nothing, or calls that were not the cluster's."""

from __future__ import annotations

from pathlib import Path
from typing import Any


async def read_record(
    store_url: str | None, store_path: Path, *, tail: int, session: str | None = None,
    principal: str | None = None, key: bytes | None = None, unreadable: list[str] | None = None,
) -> list[dict[str, Any]]:
    """The newest ``tail`` calls, oldest first, each row's seal checked with ``key``
    (``audit_readback.merge_calls``). ``unreadable``: a file store's logs that could not be read are said
    there (``audit_readback.read_audit``)."""
    from sentinel_mcp.gateway.audit_readback import read_audit, read_open

    if store_url:
        from sentinel_mcp.storage.open import open_database, release

        db = open_database(store_url, "audit")
        try:
            return await read_open(db, tail, session, principal, key)
        finally:
            await release(db)
    return await read_audit(store_path, tail=tail, session=session, principal=principal,
                            unreadable=unreadable, key=key)
