"""The offers to the orchestrator waiting now, for every replica of one shared store (``offer_contexts.py``
says what an offer's context is for).

The orchestrator hands a sub-task back to whichever replica its request reaches, not the one whose offer
waits. Known to the offering process only, another replica took the sub-task for the orchestrator's own and
ran it on the orchestrator's grants alone: a peer got through it what it was never granted. Each waiting offer
is a row of the cluster's database (its context, the principal whose intent it carries, when it expires),
signed over all three (``sentinel.cluster.seal_key``): a row made up or altered in SQL names nobody. A row
is removed when its offer ends, and expires by itself (the orchestrator's timeout and a margin) when its
replica stopped first; expired rows are swept at each offer, so the table holds at most each replica's
offers in flight (``offer_contexts.MAX_OPEN``) and those of the last timeout. Expiry is set and compared
on the database's clock (PostgreSQL), else on the process clock: set by the writer's wall clock, a clock set
back kept a crashed replica's offer naming its principal for the step. A row expiring later than ``ttl``
from the reader's now was stamped by a clock ahead (or before it went back): it names nobody.
"""

from __future__ import annotations

import logging
from typing import Any

from sentinel_mcp.core import process_clock
from sentinel_mcp.storage import Schema, Statement, StorageError
from sentinel_mcp.storage.row_signature import PROCESS_KEY, sign_row, signed_row
from sentinel_mcp.storage.shared_clock import DB_NOW, clocked, on_server_clock

log = logging.getLogger(__name__)

PURPOSE = "a2a offer"
_SQL = (
    "CREATE TABLE a2a_offers (context_id TEXT PRIMARY KEY, principal TEXT NOT NULL, "
    "expires_at {real} NOT NULL, mac TEXT NOT NULL); "
    "CREATE INDEX a2a_offers_expiry ON a2a_offers (expires_at)"
)
SCHEMA = Schema("a2a_offers", {"sqlite": [_SQL.format(real="REAL")],
                               "postgres": [_SQL.format(real="DOUBLE PRECISION")]})
_SWEEP = "DELETE FROM a2a_offers WHERE expires_at < {now}"
_OPEN = "INSERT INTO a2a_offers (context_id, principal, expires_at, mac) VALUES (?, ?, ?, ?)"
_CLOSE = "DELETE FROM a2a_offers WHERE context_id = ? AND mac = ?"
_READ = "SELECT principal, expires_at, mac, {now} FROM a2a_offers WHERE context_id = ?"
CLOCK_SKEW = 5.0  # seconds two processes' clocks on one SQLite file may differ by


class SharedOffers:
    def __init__(self, db: Any, ttl: float, key: bytes | None = None) -> None:
        self.db = db  # an open ``storage.Database`` with ``SCHEMA`` migrated
        self.ttl = ttl
        self.key = key if key is not None else PROCESS_KEY

    @classmethod
    async def open(cls, db: Any, ttl: float, key: bytes | None = None) -> "SharedOffers":
        try:
            await db.migrate(SCHEMA)
        except StorageError as e:  # degraded: offers are refused, and sub-tasks too, until it is back
            log.warning("A2A offers: the shared store is unavailable at start: %s", e)
        return cls(db, ttl, key)

    async def add(self, context_id: str, principal: str) -> str:
        """Record the offer (StorageError: not recorded, so not made); returns what ``remove`` takes."""
        now = await self._now()
        row = (context_id, principal, now + self.ttl)
        mac = sign_row(self.key, PURPOSE, row)
        await self.db.run([Statement(*clocked(self.db, _SWEEP, (), 0, lambda: now)),
                           Statement(_OPEN, (*row, mac))])
        return mac

    async def _now(self) -> float:
        """The clock an offer's expiry is set by (``principal_of`` reads the same)."""
        if on_server_clock(self.db):
            return float((await self.db.query(f"SELECT {DB_NOW}"))[0][0])
        return process_clock.now()

    async def remove(self, context_id: str, mac: str) -> None:
        try:
            await self.db.run([Statement(_CLOSE, (context_id, mac))])
        except StorageError as e:  # it expires by itself
            log.warning("A2A offers: an ended offer's row stays until it expires: %s", e)

    async def principal_of(self, context_id: str) -> str | None:
        """The principal whose offer waits in ``context_id`` (None: none does, or its row is not one a
        replica of this cluster wrote, or it expired). StorageError: the store cannot say."""
        rows = await self.db.query(*clocked(self.db, _READ, (context_id,), 0, process_clock.now))
        if not rows or len(rows[0]) != 4:
            return None
        principal, expires_at, mac, now = rows[0]
        if not signed_row(self.key, mac, PURPOSE, (context_id, principal, expires_at)):
            log.warning("an A2A offer's row not signed by a replica of this cluster: ignored")
            return None
        if not isinstance(now, float) or not isinstance(expires_at, float) or not (
            now <= expires_at <= now + self.ttl + CLOCK_SKEW
        ):
            return None  # expired, or stamped in the reader's future (its time left unknown)
        return principal if isinstance(principal, str) else None


MARGIN = 30.0  # seconds an offer's row outlives the orchestrator's timeout (the exchange's own slack)


async def share_offers(url: str, key: bytes | None, timeout: float, registries: list[Any]) -> Any:
    """The offers of ``registries`` (``OfferContexts``) kept in the store at ``url`` too; returns its
    database (the caller releases it)."""
    from sentinel_mcp.storage import open_database

    db = open_database(url, "a2a_offers")
    shared = await SharedOffers.open(db, timeout + MARGIN, key)
    for offers in registries:
        offers.shared = shared
    return db
