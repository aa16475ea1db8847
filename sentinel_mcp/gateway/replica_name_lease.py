"""One live process per ``sentinel.cluster.replica`` name: a lease row per name in the shared store.

Two live replicas under one name were not detected (docs/cluster.md says never do this): they wrote one audit
chain from two processes, and each ended the other's builds and tasks at start as its own "restarted" work. A
replica now claims its name at start with its process's random instance id and a lease on the database's clock
(replicas' clocks need not agree), renewed every ``RENEW`` seconds. A name held by a live other instance is
refused, naming the name. A crashed replica renews nothing, so its name is free once its lease lapses: a
replica restarted under it waits for that (at most ``LEASE`` plus one renewal), while a live duplicate's
renewals keep the lease current for the whole wait and the start is refused. A clean stop gives the name back.
A store unreachable at start cannot be checked: the replica starts degraded (as for every shared table) and
says so among its start-up problems.

A lease found under another instance while this one runs (it renewed nothing for longer than ``LEASE``:
frozen, stopped, paused; another process then claimed the name) stops this replica deciding: the lease is one
of the records a call relies on (``health`` degrades, the gateway's records gate refuses every call and
``/healthz`` names it), as two processes under one name write one audit chain. Each renewal, and the gate's
``probe``, tries to take the name back; once the other gives it back or lets it lapse, calls are served again.
"""

from __future__ import annotations

import logging
import secrets
import time

import anyio

from sentinel_mcp.core.display_text import compose
from sentinel_mcp.storage import Schema, Statement, StorageError
from sentinel_mcp.storage.location import LocationError
from sentinel_mcp.storage.health import StoreHealth
from sentinel_mcp.storage.shared_clock import DB_NOW

log = logging.getLogger(__name__)

LEASE = 15.0  # seconds on the database's clock
RENEW = 5.0
_SQL = ("CREATE TABLE replica_leases (replica TEXT PRIMARY KEY, instance TEXT NOT NULL, "
        "lease_until DOUBLE PRECISION NOT NULL)")
SCHEMA = Schema("replica_leases", {"sqlite": [_SQL], "postgres": [_SQL]})
# taken when free or lapsed, in one statement: of two instances claiming at once the row lock lets one win
_CLAIM = (
    f"INSERT INTO replica_leases (replica, instance, lease_until) VALUES (?, ?, {DB_NOW} + ?) "
    "ON CONFLICT (replica) DO UPDATE SET instance = excluded.instance, lease_until = excluded.lease_until "
    f"WHERE replica_leases.lease_until < {DB_NOW} RETURNING instance"
)
_LEFT = f"SELECT lease_until - {DB_NOW} FROM replica_leases WHERE replica = ?"
_RENEW = f"UPDATE replica_leases SET lease_until = {DB_NOW} + ? WHERE replica = ? AND instance = ?"
_GIVE_BACK = "DELETE FROM replica_leases WHERE replica = ? AND instance = ?"


class ReplicaNameLease:
    def __init__(self, db: object, replica: str, lease: float = LEASE, renew: float = RENEW) -> None:
        self.db = db  # an open server ``storage.Database``
        self.replica = replica
        self.instance = secrets.token_hex(16)
        self.lease, self.renew = lease, renew
        self.held = False
        # as a store's health: the records gate refuses calls while another process holds this name
        self.name = "replica name"
        self.health = StoreHealth("replica-name")

    async def claim(self) -> str | None:
        """Take the name, waiting out a lapsing lease; ``LocationError`` naming the name when a live other
        instance holds it. A problem to report when the store cannot be reached; else None."""
        deadline = time.monotonic() + self.lease + self.renew  # a live holder renews within it
        try:
            await self.db.migrate(SCHEMA)  # type: ignore[attr-defined]
            while True:
                if await self._take():
                    self.held = True
                    return None
                rows = await self.db.query(_LEFT, (self.replica,))  # type: ignore[attr-defined]
                left = rows[0][0] if rows and isinstance(rows[0][0], float) else 0.0
                wait = min(max(left, 0.0) + 0.2, deadline - time.monotonic())
                if wait <= 0:
                    raise LocationError(_duplicate(self.replica))
                await anyio.sleep(wait)
        except StorageError as e:
            if isinstance(e, LocationError):
                raise
            log.warning("could not claim the replica name in the shared store: %s", e)
            return ("sentinel.cluster.replica was not checked for another live replica of the same name "
                    "(the shared store was unreachable at start)")

    async def _take(self) -> bool:
        result = await self.db.run(  # type: ignore[attr-defined]
            [Statement(_CLAIM, (self.replica, self.instance, self.lease))])
        return [tuple(r) for r in result[0].rows] == [(self.instance,)]

    async def run(self) -> None:
        """Renew the lease until cancelled; a lease found under another instance stops this replica deciding
        (``health``) until it is taken back."""
        while True:
            await anyio.sleep(self.renew)
            if not self.health.ok:
                await self.probe()
                continue
            try:
                args = (self.lease, self.replica, self.instance)
                done = await self.db.write(_RENEW, args)  # type: ignore[attr-defined]
            except StorageError as e:
                log.warning("could not renew the replica name's lease: %s", e)
                continue
            if self.held and done.rowcount == 0 and not await self.probe():
                log.error("%s (its lease was taken while this one ran); calls are refused until this "
                          "replica holds its name again", _duplicate(self.replica))

    async def probe(self) -> bool:
        """Take the name back when it is free or lapsed; health follows (what the records gate calls while
        another process holds it)."""
        try:  # still (or again, by a probe beside this one) this instance's: renewed; else taken if free
            args = (self.lease, self.replica, self.instance)
            done = await self.db.write(_RENEW, args)  # type: ignore[attr-defined]
            took = done.rowcount == 1 or await self._take()
        except StorageError as e:  # the store's own fault: its health refuses calls; tried again later
            log.warning("could not take the replica name back: %s", e)
            return self.health.ok
        if not took:
            self.health.degrade(_duplicate(self.replica) + " (it was taken while this replica ran)")
            return False
        if not self.health.ok:
            log.warning("sentinel.cluster.replica %r is this replica's again; calls are served", self.replica)
        self.health.recover()
        return True

    async def give_back(self) -> None:
        if not self.held:
            return
        try:
            await self.db.write(_GIVE_BACK, (self.replica, self.instance))  # type: ignore[attr-defined]
        except StorageError as e:  # it lapses by itself
            log.warning("could not give the replica name back: %s", e)


def _duplicate(replica: str) -> str:
    return compose(
        "sentinel.cluster.replica \"", replica, "\" is held by another live replica on this sentinel.store: "
        "give every replica a name of its own (two under one name write one audit chain from two processes "
        "and end each other's builds and tasks at start)")
