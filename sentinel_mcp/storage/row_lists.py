"""Many rows in a few statements: ``INSERT ... VALUES (...), (...), ...`` in chunks of power-of-two sizes.

An ``executemany`` steps one statement per row: under load each step gives the GIL up and waits to get it back
(issue 21: the facts a tool result teaches are ~26 upserts and ~40 value rows a call). One statement per chunk
steps once. Chunk sizes are powers of two up to ``LARGEST`` so the connection's statement cache holds a few
texts, not one per row count. For a database whose ``multi_row_values`` is true (SQLite): PostgreSQL types a
``VALUES`` list's columns on their own and refuses an upsert that meets a row twice.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Sequence

from sentinel_mcp.storage.database import Statement

LARGEST = 64  # rows in one statement (64 x 10 columns: far below SQLite's 32,766 bound variables)


@lru_cache(maxsize=64)
def _text(head: str, tail: str, width: int, n: int) -> str:
    one = "(" + ",".join("?" * width) + ")"
    return f"{head} VALUES {','.join([one] * n)}{tail}"


def row_lists(head: str, tail: str, rows: Sequence[Sequence[Any]]) -> list[Statement]:
    """``head`` up to ``VALUES`` (``INSERT INTO t (a, b)``), ``tail`` after the list (`` ON CONFLICT ...``);
    the rows in order (a later row that conflicts with an earlier one meets it as it would row by row)."""
    if not rows:
        return []
    width = len(rows[0])
    out: list[Statement] = []
    i, left = 0, len(rows)
    while left:
        n = LARGEST if left >= LARGEST else 1 << (left.bit_length() - 1)
        params = [v for row in rows[i : i + n] for v in row]
        out.append(Statement(_text(head, tail, width, n), params))
        i += n
        left -= n
    return out
