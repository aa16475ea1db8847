"""The message ids callers sent lately, kept in the store replicas share, each with the task it started or
continued (``message_replays.py`` keeps them in the process when there is one gateway).

A replayed message (the same messageId from the same caller) must act once whichever replica it reaches:
kept per process, a replay sent to another replica than the first started a second task. Hearing a message is
one upsert of (caller, message id) naming the task it is about to start (its id is chosen first), so of two
replicas hearing it at once exactly one writes the row (the row's lock orders them) and the other reads the
first's task. A row is signed (caller, message id, task id; a key from ``sentinel.cluster.seal_key``): one
made up or pointed elsewhere in SQL is refused, and the message with it (``Untrusted``: the store cannot say
whether it was heard, so nothing acts). When the store cannot be read or written the caller is refused too.

Bounded three ways, like the process's table: ``per_caller`` rows a caller (its oldest heard forgotten at
each message), ``total`` rows in all and ``max_age`` seconds (both swept every ``sweep_every`` messages; a
row past its age is taken over by the next hearing of its id). Times are the database's clock on a server
store (one replica's clock set back or ahead does not stretch or cut the others' rows), the process's on
SQLite. Not signed: the time heard (a forged one only forgets a row early, as deleting it would).

A hearing is signed as *starting* until its task is stored, and as *stored* in the very transaction that
stores the task (``stored``). While it starts, the replica that heard it renews its time heard with its task
leases (``renew``): a replica that is slow, not gone (its store kept it waiting), keeps the message, and a
resend through another replica is told it is being handled. A starting row not renewed for ``STARTING``
whose task is not to be found stored nothing (its replica's store failed after the id was written and again
at the release, or the replica stopped): the next sending takes it over (``take_over``, one replica only)
rather than being told "received already" for a day. A stored row is never taken over: its task gone since
must not let a replay act again. Rows of earlier versions are signed as stored.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from sentinel_mcp.a2a.message_replays import CALLERS, MAX_AGE, PER_CALLER
from sentinel_mcp.core import process_clock
from sentinel_mcp.core.display_text import safe_text
from sentinel_mcp.storage import Schema, Statement, StorageError
from sentinel_mcp.storage.row_signature import PROCESS_KEY, sign, signed
from sentinel_mcp.storage.shared_clock import DB_NOW, on_server_clock

log = logging.getLogger(__name__)

PURPOSE = "a2a message id"  # its task stored
STARTING_PURPOSE = "a2a message id, its task not stored yet"
_SQL = (
    "CREATE TABLE a2a_message_ids (caller TEXT NOT NULL, message_id TEXT NOT NULL, task_id TEXT NOT NULL, "
    "heard {real} NOT NULL, mac TEXT NOT NULL, PRIMARY KEY (caller, message_id)); "
    "CREATE INDEX a2a_message_ids_caller ON a2a_message_ids (caller, heard); "
    "CREATE INDEX a2a_message_ids_heard ON a2a_message_ids (heard)"
)
SCHEMA = Schema("a2a_message_ids", {"sqlite": [_SQL.format(real="REAL")],
                                    "postgres": [_SQL.format(real="DOUBLE PRECISION")]})
_OLD = "a2a_message_ids.heard < {now} - ?"
# the row as it is (a replay), or this hearing's when there was none or it is past its age
_HEAR = (
    "INSERT INTO a2a_message_ids (caller, message_id, task_id, heard, mac) VALUES (?, ?, ?, {now}, ?) "
    "ON CONFLICT (caller, message_id) DO UPDATE SET "
    f"task_id = CASE WHEN {_OLD} THEN excluded.task_id ELSE a2a_message_ids.task_id END, "
    f"mac = CASE WHEN {_OLD} THEN excluded.mac ELSE a2a_message_ids.mac END, "
    f"heard = CASE WHEN {_OLD} THEN excluded.heard ELSE a2a_message_ids.heard END "
    "RETURNING task_id, mac"
)
# a caller's rows heard before its ``per_caller``-th newest
_TRIM_CALLER = (
    "DELETE FROM a2a_message_ids WHERE caller = ? AND heard < (SELECT heard FROM a2a_message_ids "
    "WHERE caller = ? ORDER BY heard DESC LIMIT 1 OFFSET ?)"
)
_TRIM_ALL = (
    "DELETE FROM a2a_message_ids WHERE heard < (SELECT heard FROM a2a_message_ids "
    "ORDER BY heard DESC LIMIT 1 OFFSET ?)"
)
_SWEEP = "DELETE FROM a2a_message_ids WHERE heard < {now} - ?"
_RELEASE = "DELETE FROM a2a_message_ids WHERE caller = ? AND message_id = ? AND task_id = ? AND mac = ?"
# seconds a starting hearing may go unrenewed (then its replica is taken for gone, and it may be taken over);
# renewed every ``task_lease.RENEW_EVERY``
STARTING = 60.0
_RENEW = ("UPDATE a2a_message_ids SET heard = {now} "
          "WHERE caller = ? AND message_id = ? AND task_id = ? AND mac = ?")
_STORED = ("UPDATE a2a_message_ids SET mac = ? "
           "WHERE caller = ? AND message_id = ? AND task_id = ? AND mac = ?")
_TAKE_OVER = (
    "UPDATE a2a_message_ids SET task_id = ?, mac = ?, heard = {now} "
    "WHERE caller = ? AND message_id = ? AND task_id = ? AND mac = ? AND heard < {now} - ? RETURNING task_id"
)
SWEEP_EVERY = 100  # messages heard here between sweeps of old rows and of rows beyond ``total``


class Untrusted(StorageError):
    """The store's row for a message is not one a replica of this cluster wrote: whether it was heard, and
    what it started, is not known (the message is refused)."""


class SharedMessageIds:
    def __init__(self, db: Any, *, key: bytes | None = None, per_caller: int = PER_CALLER,
                 total: int = PER_CALLER * CALLERS, max_age: float = MAX_AGE, sweep_every: int = SWEEP_EVERY,
                 clock: Callable[[], float] = process_clock.now) -> None:
        self.db = db  # an open ``storage.Database`` with ``SCHEMA`` migrated
        self.key = key if key is not None else PROCESS_KEY
        self.per_caller, self.total, self.max_age = per_caller, total, max_age
        self.sweep_every = sweep_every
        self._clock = clock
        self._heard = 0
        # hearings of this process whose task is not stored yet (``release`` forgets them if none is)
        self._open: set[tuple[str, str, str]] = set()

    @classmethod
    async def open(cls, db: Any, **kw: Any) -> "SharedMessageIds":
        try:
            await db.migrate(SCHEMA)
        except StorageError as e:  # degraded: messages are refused until the store is back
            log.warning("A2A message ids: the shared store is unavailable at start: %s", e)
        return cls(db, **kw)

    def _at(self, sql: str) -> tuple[str, tuple[Any, ...]]:
        """``sql`` with every ``{now}`` the database's clock, or this process's bound (then its parameters
        start with one reading per ``{now}``: callers splice them in order)."""
        if on_server_clock(self.db):
            return sql.format(now=DB_NOW), ()
        return sql.format(now="?"), (self._clock(),)

    async def claim(self, caller: str, message_id: str, task_id: str) -> str | None:
        """None: ``message_id`` was not heard from ``caller`` lately, and now it is, as starting (or
        continuing) ``task_id`` (``settle`` once that task is stored, else ``release``); else the task its
        first hearing named. StorageError (``Untrusted`` too): the store cannot say."""
        mac = sign(self.key, STARTING_PURPOSE, caller, message_id, task_id)
        hear, now = self._at(_HEAR)
        age = (*now, self.max_age)
        statements = [
            Statement(hear, (caller, message_id, task_id, *now, mac, *age, *age, *age)),
            Statement(_TRIM_CALLER, (caller, caller, self.per_caller - 1)),
            *self._sweeps(),
        ]
        rows = (await self.db.run(statements))[0].rows
        if not rows or len(rows[0]) != 2 or not any(
                signed(self.key, rows[0][1], purpose, caller, message_id, rows[0][0])
                for purpose in (PURPOSE, STARTING_PURPOSE)):
            log.warning("A2A message id %s of %s: its row in the shared store is not signed by a replica of "
                        "this cluster; the message is refused", safe_text(message_id, 80),
                        safe_text(caller, 80))
            raise Untrusted("the shared store's record of this message is not one a replica wrote")
        if rows[0][0] != task_id:
            return str(rows[0][0])
        self._open.add((caller, message_id, task_id))
        return None

    def _sweeps(self) -> list[Statement]:
        self._heard += 1
        if self._heard % self.sweep_every:
            return []
        sweep, now = self._at(_SWEEP)
        return [Statement(sweep, (*now, self.max_age)), Statement(_TRIM_ALL, (self.total - 1,))]

    def stored(self, caller: str, message_id: str, task_id: str) -> list[Statement]:
        """The statements that mark this hearing's task stored: run in the transaction that stores it."""
        return [Statement(_STORED, (sign(self.key, PURPOSE, caller, message_id, task_id), caller, message_id,
                                    task_id, sign(self.key, STARTING_PURPOSE, caller, message_id, task_id)))]

    async def take_over(self, caller: str, message_id: str, task_id: str, new_task_id: str) -> bool:
        """Whether the hearing that named ``task_id`` (not to be found: the caller looked) was starting for
        longer than ``STARTING``, and is now this one's, as starting ``new_task_id`` (``settle`` or
        ``release`` it as ``claim``'s). One replica gets it. StorageError: the store cannot say."""
        sql, now = self._at(_TAKE_OVER)
        mac = sign(self.key, STARTING_PURPOSE, caller, message_id, new_task_id)
        old = sign(self.key, STARTING_PURPOSE, caller, message_id, task_id)
        rows = (await self.db.run([Statement(sql, (new_task_id, mac, *now, caller, message_id, task_id, old,
                                                   *now, STARTING))]))[0].rows
        if not rows:
            return False
        log.warning("A2A message id %s of %s: its first hearing stored no task; heard anew",
                    safe_text(message_id, 80), safe_text(caller, 80))
        self._open.add((caller, message_id, new_task_id))
        return True

    async def renew(self) -> None:
        """This process's hearings still starting are alive: their time heard is now (only while the row is
        as this process signed it, starting: a stored or taken-over row is left as it is). StorageError:
        not renewed (past ``STARTING`` unrenewed, another replica may take one over; this one then runs
        nothing)."""
        sql, now = self._at(_RENEW)
        statements = [Statement(sql, (*now, caller, message_id, task_id,
                                      sign(self.key, STARTING_PURPOSE, caller, message_id, task_id)))
                      for caller, message_id, task_id in list(self._open)]
        if statements:
            await self.db.run(statements)

    def settle(self, caller: str, message_id: str, task_id: str) -> None:
        """``task_id`` is stored: the row stays (a replay, on any replica, finds the task)."""
        self._open.discard((caller, message_id, task_id))

    async def release(self, caller: str, message_id: str, task_id: str) -> None:
        """Nothing was stored for this hearing: its row goes, so a resend may try again (left when the store
        fails: a resend is then told its message was heard, and takes a new id)."""
        if (caller, message_id, task_id) not in self._open:
            return
        self._open.discard((caller, message_id, task_id))
        mac = sign(self.key, STARTING_PURPOSE, caller, message_id, task_id)
        try:
            await self.db.run([Statement(_RELEASE, (caller, message_id, task_id, mac))])
        except StorageError as e:
            log.warning("A2A message id %s: its row stays (the store failed): %s",
                        safe_text(message_id, 80), e)
