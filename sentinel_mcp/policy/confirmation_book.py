"""The default guard's confirmations: granted by the user, bound to (session, tool identity, argument
digest, policy version), expiring, used by exactly one call.

``ConfirmationBook`` keeps them in the process (one gateway). ``SharedConfirmationBook`` keeps them in the
database replicas share, so a confirmation given through one replica is used by the next identical call on
any replica, and by one call only in the whole cluster: using it is one ``DELETE ... RETURNING`` (the row lock
lets exactly one transaction have the row; a racing replica finds it gone after that commit). A store that
cannot be reached grants nothing (the call is asked again, or refused with the cause).
"""

from __future__ import annotations

import logging
import time
from typing import Any, Callable, Protocol

from sentinel_mcp.core import process_clock
from sentinel_mcp.core.decision import ToolCall
from sentinel_mcp.storage import Schema, Statement, StorageError
from sentinel_mcp.storage import principal_lock
from sentinel_mcp.storage.row_signature import PROCESS_KEY, sign_row, signed_row
from sentinel_mcp.storage.spent_rows import SpentRows
from sentinel_mcp.storage.shared_clock import DB_NOW, clocked, not_expired, on_server_clock

log = logging.getLogger(__name__)

_SQL = (
    "CREATE TABLE confirmations (session TEXT NOT NULL, tool TEXT NOT NULL, digest TEXT NOT NULL, "
    "version TEXT NOT NULL, expires_at {real} NOT NULL, PRIMARY KEY (session, tool, digest, version)); "
    "CREATE INDEX confirmations_expiry ON confirmations (expires_at)"
)
# whose each confirmation is, so one principal's unused grants are bounded (rows from before: nobody's, '')
_OWNER = (
    "ALTER TABLE confirmations ADD COLUMN principal TEXT NOT NULL DEFAULT ''; "
    "CREATE INDEX confirmations_principal ON confirmations (principal, expires_at)"
)
_LOCKS = "confirmation_principals"  # a row per principal, locked by each grant (server store)
# the binding signed with the cluster's key (``signed_binding``): a row anyone with write access to the
# database made up, or moved to another call, grants nothing (rows from before: unsigned, asked again)
_SIGNED = "ALTER TABLE confirmations ADD COLUMN mac TEXT NOT NULL DEFAULT ''"
SCHEMA = Schema(
    "confirmations",
    {
        "sqlite": [_SQL.format(real="REAL"), _OWNER, _SIGNED],
        "postgres": [_SQL.format(real="DOUBLE PRECISION"), _OWNER, _SIGNED, principal_lock.table_sql(_LOCKS)],
    },
)
# one transaction per grant, under the principal's lock on a server store (replicas granting for it at once
# are ordered, exactly: ``storage/principal_lock.py``): its expired rows go, the grant is written, and its
# oldest beyond the cap give way
_EXPIRED = "DELETE FROM confirmations WHERE principal = ? AND expires_at < {now}"
# the expiry written as signed (read on the database's clock first, on a server store)
_GRANT = (
    "INSERT INTO confirmations (session, tool, digest, version, principal, mac, expires_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (session, tool, digest, version) DO UPDATE SET expires_at = excluded.expires_at, "
    "principal = excluded.principal, mac = excluded.mac"
)
# the grant just written is never among them: the principal keeps its newest ``cap``
_TRIM = (
    "DELETE FROM confirmations WHERE principal = ? AND (session, tool, digest, version) IN ("
    "SELECT session, tool, digest, version FROM confirmations WHERE principal = ? "
    "AND NOT (session = ? AND tool = ? AND digest = ? AND version = ?) "
    "ORDER BY expires_at DESC, session, tool, digest, version LIMIT {all} OFFSET ?)"
)
# only the caller's own row (another principal's call never spends it); its signature is checked after
_TAKE = (
    "DELETE FROM confirmations WHERE session = ? AND tool = ? AND digest = ? AND version = ? "
    "AND principal = ? RETURNING expires_at, {now}, mac"
)
_HELD = (
    "SELECT expires_at, {now}, mac FROM confirmations WHERE session = ? AND tool = ? AND digest = ? "
    "AND version = ? AND principal = ?"
)
_PURGE = "DELETE FROM confirmations WHERE expires_at < {now}"
PURGE_EVERY = 200  # grants between sweeps of expired rows (a bounded table without a timer)


class Confirmations(Protocol):
    ttl: float

    async def grant(self, call: ToolCall, version: str) -> None: ...

    async def take(self, call: ToolCall, version: str) -> bool:
        """Use this call's confirmation if one is held (then it is gone): True exactly once per grant."""
        ...

    async def held(self, call: ToolCall, version: str) -> bool:
        """Whether this call's confirmation is held, leaving it there (what the call would get)."""
        ...


Key = tuple[str, str, str, str]


def _key(call: ToolCall, version: str) -> Key:
    # the tool by identity (``<server>__<tool>``), not by the name that exposed it: a name can route to
    # another server's tool once the catalog changes, and the user confirmed this one
    return (call.session_id, call.identity, call.digest, version)


def signed_binding(key: bytes, principal: str, session: str, tool: str, digest: str, version: str,
                   expires_at: float) -> str:
    """The MAC a shared confirmation row carries: whose "yes" it is, for exactly which call, until when
    (lower hex): a row kept alive past its time in SQL is no "yes" either."""
    return sign_row(key, "confirmation", (principal, session, tool, digest, version, expires_at))

MAX_HELD = 10_000  # confirmations held in one process at most (each is normally used within its call)
# confirmations one principal holds in the shared table at most (each is normally used within its call)
MAX_PER_PRINCIPAL = 1_000


class ConfirmationBook:
    """In this process (a single gateway): expiries in the order granted, bounded. A confirmation is granted
    by an answer and taken by the same call right after; one whose call never took it (cancelled or timed out
    after the answer was recorded, a rulebase reloaded in between, its conversation gone) used to stay until
    the process ended, so a client repeating that filled the process. Each grant now drops the expired ones
    and, past ``capacity``, the oldest of the principal holding the most (as ``MemoryNonceBook`` does): oldest
    first over all let one principal's many grants push out another's confirmation given a moment before
    its call."""

    def __init__(
        self, ttl: float, clock: Callable[[], float] = time.monotonic, capacity: int = MAX_HELD
    ) -> None:
        self.ttl = ttl
        self.capacity = capacity
        self._clock = clock
        self._granted: dict[Key, tuple[float, str]] = {}  # -> (expiry, principal), oldest grant first
        self._by_owner: dict[str, dict[Key, None]] = {}  # each principal's, oldest first

    def __len__(self) -> int:
        return len(self._granted)

    async def grant(self, call: ToolCall, version: str) -> None:
        now = self._clock()
        key, owner = _key(call, version), call.principal or ""
        self._forget(key)  # granted again: now the newest
        self._granted[key] = (now + self.ttl, owner)
        self._by_owner.setdefault(owner, {})[key] = None
        while self._granted:  # expired ones from the oldest (one TTL for all: grant order is expiry order)
            oldest, (expiry, _) = next(iter(self._granted.items()))
            if expiry >= now:
                break
            self._forget(oldest)
        while len(self._granted) > self.capacity:
            most = max(self._by_owner.values(), key=len)
            self._forget(next(iter(most)))

    def _forget(self, key: Key) -> float | None:
        found = self._granted.pop(key, None)
        if found is None:
            return None
        expiry, owner = found
        mine = self._by_owner[owner]
        del mine[key]
        if not mine:
            del self._by_owner[owner]
        return expiry

    async def take(self, call: ToolCall, version: str) -> bool:
        expiry = self._forget(_key(call, version))
        return expiry is not None and expiry >= self._clock()

    async def held(self, call: ToolCall, version: str) -> bool:
        found = self._granted.get(_key(call, version))
        return found is not None and found[0] >= self._clock()


class SharedConfirmationBook:
    """In the database every replica shares (``SCHEMA`` migrated by ``open``)."""

    def __init__(
        self,
        db: Any,
        ttl: float,
        clock: Callable[[], float] | None = None,
        per_principal: int = MAX_PER_PRINCIPAL,
        key: bytes | None = None,
    ) -> None:
        self.db = db
        # the cluster's (``SharedStore.key``); without a seal key this process's own: a "yes" counts on the
        # replica that stored it only (asked again elsewhere), as a sealed state does
        self._key = key if key is not None else PROCESS_KEY
        self.ttl = ttl
        self.per_principal = max(1, per_principal)
        # SQLite's (one machine): the process clock, never set back; a server store's is the database's
        # (shared_clock). The wall clock here kept a "yes" as long past its ttl as the clock was set back
        self._clock = clock or process_clock.now
        self._grants = 0
        # the rows this process used (``storage/spent_rows.py``): one put back in SQL is no second "yes";
        # each mark kept by the clock its row was judged on (a server store's: the database's)
        self._spent = SpentRows()

    @classmethod
    async def open(cls, db: Any, ttl: float, key: bytes | None = None) -> "SharedConfirmationBook":
        try:
            await db.migrate(SCHEMA)
        except StorageError as e:  # degraded: grants fail and nothing is taken until the server is back
            log.warning("confirmations: the shared store is unavailable at start: %s", e)
        return cls(db, ttl, key=key)

    def _clocked(self, sql: str, params: tuple[Any, ...], at: int) -> tuple[str, tuple[Any, ...]]:
        return clocked(self.db, sql, params, at, self._clock)

    async def grant(self, call: ToolCall, version: str) -> None:
        """Raises ``StorageError`` when it cannot be stored (the call is then refused with the cause)."""
        self._grants += 1
        if self._grants % PURGE_EVERY == 0:
            try:
                await self.db.write(*self._clocked(_PURGE, (), 0))
            except StorageError as e:
                log.warning("could not sweep expired confirmations: %s", e)
        key, owner = _key(call, version), call.principal or ""
        server = on_server_clock(self.db)
        now = float((await self.db.query(f"SELECT {DB_NOW}"))[0][0]) if server else self._clock()
        expires = now + self.ttl
        mac = signed_binding(self._key, owner, *key, expires)
        every = "ALL" if server else "-1"  # no upper limit, as each backend spells it
        statements = [
            Statement(*self._clocked(_EXPIRED, (owner,), 1)),
            Statement(_GRANT, (*key, owner, mac, expires)),
            Statement(_TRIM.format(all=every), (owner, owner, *key, self.per_principal - 1)),
        ]
        if on_server_clock(self.db):
            statements.insert(0, principal_lock.lock(_LOCKS, owner))
        await self.db.run(statements)

    async def take(self, call: ToolCall, version: str) -> bool:
        key, owner = _key(call, version), call.principal or ""
        try:
            rows = await self.db.consume(*self._clocked(_TAKE, (*key, owner), 5))
        except StorageError as e:  # fail closed: a confirmation that cannot be checked does not count
            log.warning("confirmations unavailable, the call is asked again: %s", e)
            return False
        return self._good(rows, owner, key) and self._spent.spend(rows[0][2], rows[0][0], rows[0][1])

    async def held(self, call: ToolCall, version: str) -> bool:
        key, owner = _key(call, version), call.principal or ""
        try:
            rows = await self.db.query(*self._clocked(_HELD, (*key, owner), 0))
        except StorageError:
            return False
        return self._good(rows, owner, key)

    def _good(self, rows: list[tuple[Any, ...]], owner: str, key: Key) -> bool:
        """Unexpired and signed by this cluster for exactly this principal's call (type-strict: a row
        someone wrote into the database without the seal key is no "yes")."""
        if not not_expired(rows) or len(rows[0]) < 3:
            return False
        if signed_row(self._key, rows[0][2], "confirmation", (owner, *key, rows[0][0])):
            return True
        log.warning("a confirmation row not signed for its call was refused (session %s)", key[0][:80])
        return False

