"""A ``NonceBook`` in the shared store: single use across every replica on one database.

A replica seals a state and writes its nonce here; whichever replica the retry reaches strikes it out with one
``DELETE ... RETURNING`` (the row lock lets exactly one transaction in the cluster get the row; a racing one
finds it gone after that commit). A store that cannot be reached grants nothing: ``consume`` answers False and
``issue`` raises, so a state is never handed out that no replica could honour.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from sentinel_mcp.core import process_clock
from sentinel_mcp.storage import Schema, StorageError
from sentinel_mcp.storage.shared_clock import clocked, not_expired
from sentinel_mcp.storage.spent_rows import SpentRows

log = logging.getLogger(__name__)

_SQL = (
    "CREATE TABLE {t} (nonce TEXT PRIMARY KEY, expires_at {real} NOT NULL); "
    "CREATE INDEX {t}_expiry ON {t} (expires_at)"
)
SCHEMA = Schema(
    "nonces",
    {
        "sqlite": [_SQL.format(t="nonces", real="REAL")],
        "postgres": [_SQL.format(t="nonces", real="DOUBLE PRECISION")],
    },
)
PURGE_EVERY = 500  # issues between sweeps of expired nonces (bounded table without a timer)
# a nonce's expiry is kept on the database's clock on a server store (``shared_clock``): the sealing replica
# writes what is left of its state's lifetime, the using replica compares in SQL
_PURGE = "DELETE FROM nonces WHERE expires_at < {now}"
_ISSUE = "INSERT INTO nonces (nonce, expires_at) VALUES (?, {now} + ?)"
_CONSUME = "DELETE FROM nonces WHERE nonce = ? RETURNING expires_at, {now}"


class StoredNonceBook:
    def __init__(self, db: Any, clock: Callable[[], float] | None = None) -> None:
        self.db = db  # an open ``storage.Database`` with ``SCHEMA`` migrated
        # SQLite's (one machine): the process clock, never set back; a server store's is the database's
        self._clock = clock or process_clock.now
        self._issued = 0
        self._spent = SpentRows()  # used here: a nonce put back grants nothing again

    def issue(self, nonce: str, expires_at: float, owner: str = "") -> None:  # bounded by expiry: no owner
        self._issued += 1
        if self._issued % PURGE_EVERY == 0:
            try:
                self.db.write_blocking(*clocked(self.db, _PURGE, (), 0, self._clock))
            except StorageError as e:
                log.warning("could not sweep expired nonces: %s", e)
        self.db.write_blocking(*self._issue(nonce, expires_at))

    def consume(self, nonce: str) -> bool:
        try:
            rows = self.db.run_blocking([self._consume(nonce)])[0].rows
        except StorageError as e:  # fail closed: an answer that cannot be checked is not accepted
            log.warning("nonce book unavailable, answer refused: %s", e)
            return False
        return self._unused(nonce, rows)

    def _unused(self, nonce: str, rows: list[tuple[Any, ...]]) -> bool:
        """Unexpired, and not used here before (a row put back after its use, ``storage/spent_rows.py``)."""
        return not_expired(rows) and self._spent.spend(nonce, rows[0][0], rows[0][1])

    def _issue(self, nonce: str, expires_at: float) -> tuple[str, tuple[Any, ...]]:
        return clocked(self.db, _ISSUE, (nonce, expires_at - self._clock()), 1, self._clock)

    def _consume(self, nonce: str) -> Any:
        from sentinel_mcp.storage import Statement

        return Statement(*clocked(self.db, _CONSUME, (nonce,), 1, self._clock))

    # the gateway's path: the same statements through the writer thread, awaited (the event loop never blocks
    # on PostgreSQL while a state is sealed or an answer checked)
    async def issue_async(self, nonce: str, expires_at: float, owner: str = "") -> None:
        self._issued += 1
        if self._issued % PURGE_EVERY == 0:
            try:
                await self.db.write(*clocked(self.db, _PURGE, (), 0, self._clock))
            except StorageError as e:
                log.warning("could not sweep expired nonces: %s", e)
        await self.db.write(*self._issue(nonce, expires_at))

    async def consume_async(self, nonce: str) -> bool:
        try:
            rows = (await self.db.run([self._consume(nonce)]))[0].rows
        except StorageError as e:  # fail closed: an answer that cannot be checked is not accepted
            log.warning("nonce book unavailable, answer refused: %s", e)
            return False
        return self._unused(nonce, rows)
