"""A row alone committed on the caller's thread (``SQLiteDatabase.write_inline``) takes ``_commit_statement``
straight, without a job around it (issue 21): what it answers, raises, counts and leaves on disk is what the
writer's way gives the same statements, on two stores side by side; anything else keeps the group's way."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.storage import Schema, Statement, StorageError, open_database
from sentinel_mcp.storage import inline_policy
from sentinel_mcp.storage import sqlite as sqlite_store
from sentinel_mcp.storage.open import release

SCHEMA = Schema("t", {"sqlite": ["CREATE TABLE t (id INTEGER PRIMARY KEY, x TEXT UNIQUE NOT NULL)"]})
INSERT = "INSERT INTO t (x) VALUES (?)"


@pytest.fixture(autouse=True)
def _no_slow_commits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inline_policy, "SLOW_S", 3600.0)
    monkeypatch.setattr(inline_policy, "STALL_S", 3600.0)


def _rows(path: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as c:
        return list(c.execute("SELECT id, x FROM t ORDER BY id"))


def _shape(results: list[Any]) -> list[tuple[Any, ...]]:
    return [(r.rowcount, r.lastrowid, r.rows) for r in results]


KEPT = [(1, "one"), (2, "two"), (3, "three"), (4, "four"), (5, "five"), (6, "six")]
STEPS: list[list[Statement]] = [
    [Statement(INSERT, ("one",))],
    [Statement(INSERT + " RETURNING id, x", ("two",))],
    [Statement(INSERT, ("one",))],  # its own error: UNIQUE
    [Statement(INSERT, (None,))],  # NOT NULL
    [Statement(INSERT, ("\ud800",))],  # text SQLite cannot bind: the statement's own error
    [Statement("UPDATE t SET x = x || '!' WHERE x = ?", ("none",))],  # nothing changed
    [Statement(INSERT, ("three",)), Statement(INSERT, ("four",))],  # two: the group's way
    [Statement(INSERT, [("five",), ("six",)], many=True)],  # many: the group's way
    [Statement(INSERT, ("seven",)), Statement(INSERT, ("two",))],  # its error: none of it stays
    [Statement("SELECT x FROM t WHERE id = ?", (2,))],
]


async def test_a_statement_alone_inline_answers_as_the_writer_does(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    inline, writer = tmp_path / "inline.db", tmp_path / "writer.db"
    a, b = open_database(inline, "a"), open_database(writer, "b")
    jobs = {"made": 0}
    made = sqlite_store.Job

    def counted(*args: Any) -> Any:
        jobs["made"] += 1
        return made(*args)

    try:
        await a.migrate(SCHEMA)
        await b.migrate(SCHEMA)
        assert a.options.exclusive  # a gateway's own file: where a row alone takes the straight way
        monkeypatch.setattr(sqlite_store, "Job", counted)
        answered = 0
        for step in STEPS:
            jobs["made"] = 0
            got: Any
            try:
                out = a.write_inline(lambda step=step: list(step))  # type: ignore[misc]
                assert out is not None
                got = _shape(out)
                answered += 1
            except Exception as e:  # noqa: BLE001 - compared below (the store named the same way)
                got = (type(e), str(e).replace(str(inline), "F").replace("a store", "s"),
                       type(e.__cause__))
            straight = len(step) == 1 and not step[0].many
            assert (jobs["made"] == 0) == straight, step  # the group's way makes its jobs
            try:
                want: Any = _shape(await b.run(list(step)))
            except Exception as e:  # noqa: BLE001
                want = (type(e), str(e).replace(str(writer), "F").replace("b store", "s"),
                        type(e.__cause__))
            assert got == want, step
            assert a.health.ok and b.health.ok
        select = "SELECT id, x FROM t ORDER BY id"
        assert await a.query(select) == await b.query(select) == KEPT
        assert (a.commits, a.committed_jobs) == (b.commits, b.committed_jobs)
        assert a.inline_commits == answered == 6
    finally:
        await release(a)
        await release(b)
    assert _rows(inline) == _rows(writer) == KEPT  # on disk, read by another connection once let go


async def test_a_fault_inline_degrades_the_store_as_the_writers_would(tmp_path: Path) -> None:
    inline, writer = tmp_path / "inline.db", tmp_path / "writer.db"
    a, b = open_database(inline, "a"), open_database(writer, "b")
    try:
        await a.migrate(SCHEMA)
        await b.migrate(SCHEMA)
        os.unlink(inline)
        os.unlink(writer)
        with pytest.raises(StorageError) as inline_error:
            a.write_inline(lambda: [Statement(INSERT, ("lost",))])
        with pytest.raises(StorageError) as writer_error:
            await b.run([Statement(INSERT, ("lost",))])
        assert str(inline_error.value).replace(str(inline), "F").replace("a store", "s") == str(
            writer_error.value).replace(str(writer), "F").replace("b store", "s")
        assert not a.health.ok and not b.health.ok
        assert a.write_inline(lambda: [Statement(INSERT, ("z",))]) is None  # degraded: sent to the writer
    finally:
        await release(a)
        await release(b)
