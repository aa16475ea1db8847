"""Rows written as a few multi-row statements (storage/row_lists.py) land exactly as one statement per row."""

from __future__ import annotations

import random
import sqlite3

import pytest

from sentinel_mcp.storage.row_lists import LARGEST, _text, row_lists

pytestmark = pytest.mark.timeout(30)

HEAD = "INSERT INTO t (k, v, n)"
TAIL = " ON CONFLICT (k) DO UPDATE SET v = excluded.v, n = excluded.n"


def _db() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.execute("CREATE TABLE t (k TEXT PRIMARY KEY, v, n)")
    return conn


@pytest.mark.parametrize("count", [0, 1, 2, 3, 63, 64, 65, 127, 129, 200, 1000])
def test_chunks_are_powers_of_two_and_keep_every_row_in_order(count):
    rows = [(f"k{i}", f"v{i}", i) for i in range(count)]
    statements = row_lists(HEAD, TAIL, rows)
    sizes = [st.sql.count("(?,?,?)") for st in statements]
    assert sum(sizes) == count and all(n & (n - 1) == 0 and 1 <= n <= LARGEST for n in sizes)
    assert len(statements) <= count // LARGEST + LARGEST.bit_length()  # few statements, not one per row
    assert [v for st in statements for v in st.params] == [v for row in rows for v in row]
    assert all(not st.many for st in statements)


def test_conflicts_in_one_list_end_as_they_would_row_by_row():
    # the same key several times in one statement (and across chunks): the last row wins, as with executemany;
    # values of every kind SQLite keeps (text with quotes and NULs, bytes, None, big and negative numbers)
    rnd = random.Random(7)
    kinds = ["it's", "a\x00b", "\u00e9\U0001f600", b"\x00\xff", None, 2**63 - 1, -(2**63), 1.5e300, -0.0, ""]
    rows = [(f"k{rnd.randrange(20)}", rnd.choice(kinds), rnd.randrange(10**6)) for _ in range(300)]
    one, many = _db(), _db()
    for st in row_lists(HEAD, TAIL, rows):
        many.execute(st.sql, st.params)
    one.executemany(f"{HEAD} VALUES (?,?,?){TAIL}", rows)
    dump = "SELECT k, v, typeof(v), n FROM t ORDER BY k"
    assert many.execute(dump).fetchall() == one.execute(dump).fetchall()


def test_a_bad_row_fails_its_whole_statement():
    conn = _db()
    conn.execute("CREATE TABLE c (k TEXT PRIMARY KEY, n INTEGER NOT NULL)")
    (st,) = row_lists("INSERT INTO c (k, n)", "", [("a", 1), ("b", None)])
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(st.sql, st.params)
    assert conn.execute("SELECT COUNT(*) FROM c").fetchone() == (0,)


def test_the_statement_texts_stay_few():
    _text.cache_clear()
    for count in range(1, 400):
        row_lists(HEAD, TAIL, [("k", "v", 1)] * count)
    assert _text.cache_info().currsize == LARGEST.bit_length()  # 1, 2, 4, ..., 64
