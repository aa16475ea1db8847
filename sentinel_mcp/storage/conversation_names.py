"""Conversations named by a plain label (or an A2A context), shared by the replicas of one database.

A client may name its conversation with a label (``X-Sentinel-Session: trip``). On one gateway the label maps
to a conversation in the process; with replicas, the label of a principal must name the same conversation on
every replica (its facts, its confirmations), whichever replica a call reaches. The mapping lives in the
shared database: one row per (principal, label) with the conversation's id and when it was last used.
Naming a label is one upsert that keeps the row's conversation while it is in use and starts a new one once it
has been idle for ``idle`` seconds (the same time to live on every replica), so two replicas naming a new
label at once get the same conversation (the row's lock orders them).

A replica remembers a label's conversation for ``refresh`` seconds (far below ``idle``) before it touches the
row again: a call within that time costs no round trip, and since the row was touched less than ``refresh``
ago, no replica can find it idle meanwhile. The principal is part of the key, so one principal's label never
names another's conversation; a row whose conversation id is not that principal's is refused, never used.

Kinds keep namespaces apart: a client's label (``kind="label"``: letters, digits, ``_.-``) and an A2A peer's
context (``kind="a2a"``, stored as ``a2a:<digest of the context id>``) never name each other's conversation.

A row is signed by the replica that started its conversation (principal, label, conversation id; a key from
``sentinel.cluster.seal_key``): one pointed in SQL at another conversation (an older one of the same label,
whose answers still live) or made up is not followed; the label gets a conversation of its own, replacing
the row (a row from before signing too: its label starts a new conversation once).
"""

from __future__ import annotations

import logging
import secrets
import time
from collections import OrderedDict
from typing import Any, Callable

from sentinel_mcp.core import process_clock
from sentinel_mcp.storage import Schema, StorageError
from sentinel_mcp.storage.row_signature import PROCESS_KEY, sign, signed
from sentinel_mcp.storage.shared_clock import DB_NOW, on_server_clock

log = logging.getLogger(__name__)

_SQL = (
    "CREATE TABLE conversation_labels (principal TEXT NOT NULL, label TEXT NOT NULL, session TEXT NOT NULL, "
    "used_at {real} NOT NULL, PRIMARY KEY (principal, label)); "
    "CREATE INDEX conversation_labels_used ON conversation_labels (used_at)"
)
_SIGNED = "ALTER TABLE conversation_labels ADD COLUMN mac TEXT NOT NULL DEFAULT ''"
SCHEMA = Schema(
    "conversation_labels",
    {"sqlite": [_SQL.format(real="REAL"), _SIGNED],
     "postgres": [_SQL.format(real="DOUBLE PRECISION"), _SIGNED]},
)
PURPOSE = "conversation label"
# keeps the row's conversation unless it was idle past ``idle`` seconds; ``used_at`` only moves forward.
# ``{now}``: the database's clock on a server store (a replica whose clock lags would keep a conversation
# idle past its time to live everywhere else; one running ahead would write a use in the future); on SQLite
# the process's.
_NAME = (
    "INSERT INTO conversation_labels (principal, label, session, mac, used_at) VALUES (?, ?, ?, ?, {now}) "
    "ON CONFLICT (principal, label) DO UPDATE SET "
    "session = CASE WHEN conversation_labels.used_at < {now} - ? THEN excluded.session "
    "ELSE conversation_labels.session END, "
    "mac = CASE WHEN conversation_labels.used_at < {now} - ? THEN excluded.mac "
    "ELSE conversation_labels.mac END, "
    "used_at = CASE WHEN conversation_labels.used_at > excluded.used_at THEN conversation_labels.used_at "
    "ELSE excluded.used_at END "
    "RETURNING session, mac"
)
# a row no replica signed (made up, pointed elsewhere, from before signing) replaced by a new conversation,
# only while it is still that row (a replica that replaced it first wins; the other reads its row)
_REPLACE = (
    "UPDATE conversation_labels SET session = ?, mac = ?, used_at = {now} "
    "WHERE principal = ? AND label = ? AND session = ? AND mac = ? RETURNING session, mac"
)
PURGE_EVERY = 500  # round trips between sweeps of rows idle past twice the time to live


class LabelsUnavailable(StorageError):
    """The shared store cannot say which conversation a label names (the call is refused)."""


class SharedLabels:
    def __init__(self, db: Any, idle: float, *, refresh: float | None = None, capacity: int = 20_000,
                 clock: Callable[[], float] | None = None, monotonic: Callable[[], float] = time.monotonic,
                 key: bytes | None = None) -> None:
        self.db = db
        self.key = key if key is not None else PROCESS_KEY  # the cluster's (``SharedStore.key``)
        self.idle = idle
        self.refresh = min(60.0, idle / 10) if refresh is None else refresh
        self.capacity = capacity
        # on SQLite (one machine) the process clock: the wall clock set back kept a label's conversation past
        # its idle time to live as long as the step; a server store's is the database's
        self._clock = clock or process_clock.now
        self._monotonic = monotonic
        self._known: OrderedDict[tuple[str, str], tuple[str, float]] = OrderedDict()
        self._trips = 0

    @classmethod
    async def open(cls, db: Any, idle: float, key: bytes | None = None) -> "SharedLabels":
        try:
            await db.migrate(SCHEMA)
        except StorageError as e:  # degraded: labels are refused until the server is back
            log.warning("conversation labels: the shared store is unavailable at start: %s", e)
        return cls(db, idle, key=key)

    def _signed(self, principal: str, label: str, row: Any) -> bool:
        """A row's (session, mac) as read: signed by a replica of this cluster for this principal, label."""
        return signed(self.key, row[1], PURPOSE, principal, label, row[0])

    async def current(self, principal: str, label: str) -> str | None:
        """The conversation a client's ``label`` names for ``principal`` now, read and never written: None
        when no row is in use (``session`` would start a new conversation). For comparing two keys of a
        request before either is resolved (a refused request writes no row)."""
        known = self._known.get((principal, label))
        if known is not None and self._monotonic() - known[1] < self.refresh:
            return known[0]
        server = on_server_clock(self.db)
        try:
            rows = await self.db.query(
                "SELECT session, mac FROM conversation_labels "
                "WHERE principal = ? AND label = ? AND used_at >= {now} - ?".format(
                    now=DB_NOW if server else "?"),
                (principal, label, *(() if server else (self._clock(),)), self.idle),
            )
        except StorageError as e:
            raise LabelsUnavailable(f"the shared store cannot say which conversation this is: {e}") from None
        sid = rows[0][0] if rows and self._signed(principal, label, rows[0]) else None
        return sid if isinstance(sid, str) and sid.startswith(f"{principal}/label-{label}-") else None

    async def session(self, principal: str, label: str, kind: str = "label") -> str:
        """The id of the conversation ``label`` names for ``principal`` (the same on every replica):
        ``<principal>/<kind>-<label>-<random>``. ``kind`` and ``label`` come from Sentinel (a checked label, a
        digest), never verbatim from a client."""
        if kind != "label":
            label = f"{kind}:{label}"  # a client's label has no ':' (its allow list): no collision
        key = (principal, label)
        known = self._known.get(key)
        if known is not None and self._monotonic() - known[1] < self.refresh:
            self._known.move_to_end(key)
            return known[0]
        prefix = f"{principal}/{kind}-{label.removeprefix(kind + ':')}-"
        now = self._clock()
        self._trips += 1
        try:
            server = on_server_clock(self.db)
            if self._trips % PURGE_EVERY == 0:
                await self.db.write(
                    "DELETE FROM conversation_labels WHERE used_at < {now} - ?".format(
                        now=DB_NOW if server else "?"
                    ),
                    (2 * self.idle,) if server else (now, 2 * self.idle),
                )
            fresh = prefix + secrets.token_hex(8)
            mac = sign(self.key, PURPOSE, principal, label, fresh)
            out = await self.db.write(
                _NAME.format(now=DB_NOW if server else "?"),
                (principal, label, fresh, mac, *(() if server else (now, now)), self.idle,
                 *(() if server else (now,)), self.idle),
            )
            row = out.rows[0] if out.rows else None
            if row is not None and not self._signed(principal, label, row):
                log.warning("conversation label row of %r not signed by a replica of this cluster: replaced",
                            principal)
                replaced = await self.db.write(
                    _REPLACE.format(now=DB_NOW if server else "?"),
                    (fresh, mac, *(() if server else (now,)), principal, label, row[0], row[1]),
                )
                if not replaced.rows:  # another replica replaced it first: its row, signed
                    replaced = await self.db.write(
                        _NAME.format(now=DB_NOW if server else "?"),
                        (principal, label, fresh, mac, *(() if server else (now, now)), self.idle,
                         *(() if server else (now,)), self.idle),
                    )
                row = replaced.rows[0] if replaced.rows and self._signed(principal, label,
                                                                        replaced.rows[0]) else None
        except StorageError as e:
            raise LabelsUnavailable(f"the shared store cannot say which conversation this is: {e}") from None
        sid = row[0] if row is not None else None
        if not isinstance(sid, str) or not sid.startswith(prefix) or len(sid) > len(prefix) + 64:
            log.error("conversation label row of %r is malformed; refused", principal)
            raise LabelsUnavailable("the shared store holds a malformed conversation for this label")
        self._known[key] = (sid, self._monotonic())
        self._known.move_to_end(key)
        while len(self._known) > self.capacity:
            self._known.popitem(last=False)
        return sid
