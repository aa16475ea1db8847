"""Audit rows written together: the rows that arrive while the store's writer is busy go into one open batch,
which the writer seals when it takes it and writes with one statement (every row inserted by one multi-row
``INSERT``; the schema's trigger moves the chain head with each row, ``audit_schema.py``), whatever the
number of rows, on either backend: PostgreSQL's list says each column's type (``insert_rows_sql(n, typed)``:
it would type a column of the list on its own, text for a column of NULLs), so a group of rows is one
statement there too, and alone, one round trip (``PostgresDatabase._one_statement``).

Why: under load each statement the writer thread runs lets go of the interpreter and waits to get it back
from the busy event loop (measured: ~240 us of wall time for an ``UPDATE`` or ``INSERT`` using ~30-70 us of
CPU). With two statements per row, a group commit of eight calls' rows took ~7.8 ms, and every call waits
for two commits, so the writer, not the CPU, bounded the rate of 16 clients. A batch costs the same one
statement for one row or sixty-four, and a commit of it alone no ``BEGIN``/``COMMIT`` either (``sqlite.py``).

The rows are chained on the event loop's thread, in order, as before (``AuditLog._chained``); a batch only
carries them. It is appended to on that thread until the writer seals it (under a lock: a row added after is
put in the next batch, never lost or reordered), and its ``INSERT`` lands all its rows or none: each row only
if the head is at its ``prev_hash`` (the trigger), in order, so a batch chained onto rows that were not
committed inserts nothing (its first row is not on the head, so neither is any after it) and its writers
chain their rows again, one by one. A row that might fail on its own (a ``NOT NULL`` column empty, a value
SQLite cannot bind or binds as NULL: a NaN, an integer past 64 bits; text that is not UTF-8) is never
batched: it could only fail the other calls' rows with it.
"""

from __future__ import annotations

import asyncio
import math
import threading
from functools import lru_cache
from typing import Any, Iterator

from sentinel_mcp.core.running_loop import running_loop
from sentinel_mcp.gateway.audit_schema import HASHED
from sentinel_mcp.storage import Statement

MAX_ROWS = 64  # rows per batch: bounds the statement's parameters and the distinct statements cached

# the columns the schema holds NOT NULL (a row missing one is written alone: its error stays its own)
_REQUIRED = tuple(HASHED.index(c) for c in (
    "chain", "ts", "decision_id", "event", "session", "origin", "tool", "decision", "outcome"))

# PostgreSQL's type of each column of the list (``audit_schema._PG_TABLES``): every one text but two floats
_FLOATS = frozenset(("ts", "latency_ms"))
_FLOAT_AT = tuple(HASHED.index(c) for c in sorted(_FLOATS))
_TYPED = tuple(
    "?::double precision" if c in _FLOATS else "?::text"
    for c in (*HASHED, "prev_hash", "hash", "mac"))


@lru_cache(maxsize=2 * MAX_ROWS)
def insert_rows_sql(n: int, typed: bool = False) -> str:
    """The ``INSERT`` of ``n`` rows, in order (each inserted only if chained onto the head: the trigger);
    ``typed``: each value cast to its column's type (PostgreSQL)."""
    width = len(HASHED) + 3  # every hashed column, then prev_hash, hash and mac (``audit_seal.py``)
    row = ", ".join(_TYPED if typed else ["?"] * width)
    values = ", ".join(f"({i}, {row})" for i in range(n))
    columns = ", ".join(f"column{i}" for i in range(2, width + 2))  # column1 is the row's place
    return (
        f"INSERT INTO audit ({', '.join(HASHED)}, prev_hash, hash, mac) "
        f"SELECT {columns} FROM (VALUES {values})"
        + (" AS v" if typed else "")  # PostgreSQL (before 16) names every subquery
        + " ORDER BY column1"
    )


_PLAIN = frozenset((str, int, float, type(None)))  # what SQLite binds as the row builder means it
_INT64 = (-(2**63), 2**63 - 1)


def batchable(values: tuple[Any, ...], text: str) -> bool:
    """Whether this row can only fail with its whole batch (a fault of the store), never alone. ``text`` is
    its ``canonical`` JSON (made for its hash): when that is ASCII, so is every text in the row."""
    for i in _REQUIRED:
        if values[i] is None:
            return False
    for i in _FLOAT_AT:  # PostgreSQL's cast of the list (``typed``) takes a number there, never a text
        if type(values[i]) not in (float, int, type(None)):
            return False
    kinds = set(map(type, values))
    if not kinds <= _PLAIN:
        return False
    if int in kinds or float in kinds:
        for v in values:  # SQLite binds 64-bit integers only, and a NaN as NULL (a NOT NULL column's error)
            kind = type(v)
            if (kind is int and not _INT64[0] <= v <= _INT64[1]) or (kind is float and not math.isfinite(v)):
                return False
    if text.isascii():
        return True
    for v in values:  # text beyond ASCII: it binds only if it is UTF-8 (no lone surrogate)
        if type(v) is str and not v.isascii():
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                return False
    return True


class RowBatch:
    """Chained rows of one chain, open until the writer reads its statements (iterating it seals it), and
    answered as a future is (``done``, ``set_result``, ``set_exception``: called by the store on the event
    loop's thread once the batch ran), which answers each row's own future: a caller that gives up cancels
    its own future only, never the batch's commit."""

    __slots__ = ("chain", "typed", "_loop", "_rows", "_lock", "_statements", "_waiters", "answered")

    def __init__(self, chain: str, typed: bool = False) -> None:
        self.chain = chain
        self.typed = typed  # the list's values cast to their columns' types (PostgreSQL)
        self._loop = running_loop()  # where it is answered: its callers wait on this loop only
        self._rows: list[tuple[tuple[Any, ...], str, str, str | None]] = []
        self._lock = threading.Lock()
        self._statements: list[Statement] | None = None
        self._waiters: list[asyncio.Future[Any]] = []  # the rows' callers (only the loop's thread reads them)
        self.answered = False

    def add(self, values: tuple[Any, ...], prev: str, new: str, waiter: asyncio.Future[Any],
            mac: str | None = None) -> bool:
        """Append a row chained from ``prev`` to ``new`` (sealed with ``mac``, ``audit_seal.py``) whose caller
        waits on ``waiter`` (on the event loop's thread); False once sealed, answered or full (the row then
        starts the next batch)."""
        with self._lock:
            if self._statements is not None or self.answered or len(self._rows) >= MAX_ROWS:
                return False
            if waiter.get_loop() is not self._loop:
                return False  # a caller on another loop: its future must not be settled from this one
            if self._rows and self._rows[-1][2] != prev:
                return False  # not the next link of this batch's chain (the head was read again)
            self._rows.append((values, prev, new, mac))
            self._waiters.append(waiter)
            return True

    # the store's answer, on the event loop's thread
    def done(self) -> bool:
        return self.answered

    def set_result(self, value: Any) -> None:
        self.answered = True
        for w in self._waiters:
            if not w.done():
                w.set_result(value)

    def set_exception(self, error: BaseException) -> None:
        self.answered = True
        for w in self._waiters:
            if not w.done():
                w.set_exception(error)

    @property
    def size(self) -> int:
        """Rows in the batch (final once sealed)."""
        return len(self._rows)

    def __iter__(self) -> Iterator[Statement]:
        """The statements, on the writer's thread: the batch is sealed from here on."""
        with self._lock:
            if self._statements is None:
                self._statements = self._build()
            return iter(self._statements)

    def _build(self) -> list[Statement]:
        rows = self._rows
        params: list[Any] = []
        for values, prev, new, mac in rows:
            params.extend(values)
            params.append(prev)
            params.append(new)
            params.append(mac)
        return [Statement(insert_rows_sql(len(rows), self.typed), tuple(params))]
