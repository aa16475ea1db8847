"""The bound on the bytes of one stored row, read or written, on both backends.

Why: rows were read whole, however large. A co-tenant of a PostgreSQL database (or a hostile local account
with a SQLite file, an older gateway, a value a client or an upstream made us store) with four 64 MB rows
took a replica from 37 MB to 613 MB of memory, on every read of them. So:

- SQLite bounds it itself: ``SQLITE_LIMIT_LENGTH`` on each connection refuses (``SQLITE_TOOBIG``) a row it
  would write over the bound and a value over the bound as it is read from the file, before it is copied
  out; nothing more per statement.
- PostgreSQL is bounded on the server's side of the socket: a read (and a write that answers rows, a
  ``DELETE ... RETURNING``) is wrapped so the server measures each row's text (what it would send: a
  record's text, each value's quotes and backslashes doubled, a BYTEA in hex) and refuses one over the bound
  before sending it. A write's values are measured here, before they are sent, as that text at most (their
  row's other columns are ours: numbers, times, names).

A refusal is a ``RowTooLarge``, which the seam hands its caller as a ``StatementError`` (the caller fails
closed; the store stays healthy: one row is at fault, not the store). The largest row Sentinel writes on
purpose is a shared rulebase version (8 MiB of texts).
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from sentinel_mcp.core.errors import SentinelError
from sentinel_mcp.storage.database import Params

MAX_ROW_BYTES = 16 << 20
SAID = (f"a row over {MAX_ROW_BYTES} bytes, which a store neither writes nor reads (another writer "
        "of the database put it there, or a value that large was offered)")
# the server's refusal: a cast that fails with our words in it (no function to install, no privilege needed)
_MARK = "sentinel: a stored row over the bound"
_CHECK = (f"CASE WHEN pg_catalog.octet_length(sentinel_row::text) <= {MAX_ROW_BYTES} THEN true "
          f"ELSE ('{_MARK}: ' || pg_catalog.octet_length(sentinel_row::text))::int > 0 END")


class RowTooLarge(SentinelError, ValueError):
    """A row over the bound, read or to be written (handed to the caller as a ``StatementError``)."""

    area = "storage"

    def __init__(self) -> None:
        super().__init__(SAID)


_RETURNING = re.compile(r"\bRETURNING\b", re.IGNORECASE)
# a read the server answers in its own words (no stored row in them): not wrapped; every other read is
_SERVERS_OWN = re.compile(r"(?:SHOW|EXPLAIN)\b", re.IGNORECASE)
_ANSWERS = re.compile(r"(SELECT|VALUES|TABLE)\b", re.IGNORECASE)
_wrapped: dict[tuple[str, bool], str] = {}


def bound_sqlite(conn: sqlite3.Connection) -> sqlite3.Connection:
    """``conn`` refusing a row over the bound as it writes one, a value over it as it reads one (a reader
    outside the seam: a CLI's copy of a store, another instance's file taken over)."""
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_ROW_BYTES)
    return conn


def bounded_sql(sql: str, writes: bool) -> str:
    """``sql`` (placeholders translated) with each row it answers measured by the server: a read becomes a
    subquery (its order kept: a sorted subquery is scanned as it is), a write that returns rows a CTE, as
    data-changing statements may be; one that starts with its own ``WITH`` (which must stay at the top) gets
    its last statement made one more CTE."""
    key = (sql, writes)
    out = _wrapped.get(key)
    if out is None:
        body = sql.strip().rstrip(";")  # closed on a line of its own below: a last ``--`` comment ends there
        body = body[_after_comments(body):]  # a statement led by a comment is that statement all the same
        if not writes and _SERVERS_OWN.match(body):
            out = sql  # SHOW, EXPLAIN: the server's own words, no stored row
        elif not writes:
            out = f"SELECT sentinel_row.* FROM ({body}\n) sentinel_row WHERE {_CHECK}"
        elif not _RETURNING.search(body):
            out = sql
        elif body[:4].lower() != "with":
            out = f"WITH sentinel_row AS ({body}\n) SELECT sentinel_row.* FROM sentinel_row WHERE {_CHECK}"
        else:  # a data-changing WITH stays at the top: the statement after its CTEs becomes one more CTE
            main = _main_statement(body)
            tail = body[main:] if main is not None else ""
            if main is None or not (_ANSWERS.match(tail) or _RETURNING.search(tail)):
                out = sql  # it answers no rows (or was not read to its end: the server refuses that)
            else:
                out = (f"{body[:main].rstrip()}, sentinel_row AS ({tail}\n) SELECT sentinel_row.* FROM "
                       f"sentinel_row WHERE {_CHECK}")
        if len(_wrapped) < 4096:
            _wrapped[key] = out
    return out


def _after_comments(body: str) -> int:
    """Where ``body``'s first word starts, past blanks and comments (``--`` to the line's end, ``/* */``
    nested as PostgreSQL nests them): a read led by a comment is a read all the same. An unclosed comment
    gives the end (nothing is matched there, so the read is wrapped and the server refuses it)."""
    i, n = 0, len(body)
    while i < n:
        if body[i].isspace():
            i += 1
        elif body.startswith("--", i):
            end = body.find("\n", i)
            i = n if end == -1 else end + 1
        elif body.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if body.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif body.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        else:
            break
    return i


def _main_statement(body: str) -> int | None:
    """Where the statement after a ``WITH``'s CTEs starts in ``body``: the first closing parenthesis back at
    the top that no comma (another CTE) nor ``AS`` (after a CTE's column list) follows; None if not found.
    Quoted text and names are skipped (a parenthesis in a literal counts for nothing)."""
    depth, i, n = 0, 4, len(body)
    while i < n:
        c = body[i]
        if c in "'\"":
            end = body.find(c, i + 1)
            while end != -1 and body[end + 1:end + 2] == c:  # a doubled quote inside
                end = body.find(c, end + 2)
            if end == -1:
                return None
            i = end + 1
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                rest = body[i + 1:].lstrip()
                if not rest.startswith(",") and not re.match(r"(?i)AS\b", rest):
                    return i + 1 + (len(body[i + 1:]) - len(rest))
        i += 1
    return None


def bounded_write(sql: str, params: Params, many: bool) -> str:
    """A write's SQL as it is sent: refused here (``RowTooLarge``) if its values could make a row over the
    bound, which would never be read back; the rows it answers measured by the server."""
    check_values(params, many)
    return sql if many else bounded_sql(sql, True)


def is_bound_refusal(e: BaseException) -> bool:
    """The server's refusal of a row over the bound (``bounded_sql``'s cast)."""
    return getattr(e, "sqlstate", None) == "22P02" and _MARK in str(e)


def check_values(params: Params, many: bool) -> None:
    """Raise ``RowTooLarge`` if one row of values to write (each row of an ``executemany``) could read back as
    more than ``MAX_ROW_BYTES`` of a record's text. Exactly measured only when it could be over: the usual
    statement costs a length per text value."""
    for row in (params if many else (params,)):
        most = 2 + _OTHER * len(row)  # the record's parentheses; each value's comma, quotes, a number
        for value in row:
            if isinstance(value, str):
                most += 4 * len(value)  # UTF-8's widest character; a doubled quote is 2 bytes
            elif isinstance(value, (bytes, bytearray)):
                most += 2 * len(value)
        if most > MAX_ROW_BYTES and _text_bytes(row) > MAX_ROW_BYTES:
            raise RowTooLarge()


_OTHER = 48  # bytes of a value's text that is not text nor bytes (a number, a time), its quotes and comma


def _text_bytes(row: Any) -> int:
    total = 2
    for value in row:
        if isinstance(value, str):
            size = len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))
            total += size + value.count('"') + value.count("\\") + 3
        elif isinstance(value, (bytes, bytearray)):
            total += 2 * len(value) + 6  # "\\x..." in hex
        else:
            total += _OTHER
    return total
