"""The storage seam on real SQLite: group commit, job isolation, single use, faults and recovery."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sentinel_mcp.storage import Schema, Statement, StorageError, open_database
from sentinel_mcp.storage.open import release
from sentinel_mcp.storage.sqlite import SHARED

SCHEMA = Schema("t", {"sqlite": ["CREATE TABLE t (id INTEGER PRIMARY KEY, x TEXT UNIQUE)"]})


async def test_concurrent_writes_share_commits_and_a_bad_job_fails_alone(tmp_path: Path) -> None:
    db = open_database(tmp_path / "a.db", "t")
    try:
        await db.migrate(SCHEMA)
        before = db.commits
        results = await asyncio.gather(*[db.write("INSERT INTO t (x) VALUES (?)", (str(i % 150),))
                                         for i in range(300)], return_exceptions=True)
        failed = [r for r in results if isinstance(r, Exception)]
        assert len(failed) == 150 and all("UNIQUE" in str(e) for e in failed)  # the duplicates, and only they
        assert (await db.query("SELECT COUNT(*) FROM t"))[0][0] == 150
        assert db.health.ok  # a statement's error is the caller's, not a storage fault
        assert db.commits - before < 150  # 300 durable writes did not take 300 fsyncs
        # every write returned only after its commit: another connection sees all of them
        await release(db)
        db = open_database(tmp_path / "a.db", "t")
        assert (await db.query("SELECT COUNT(*) FROM t"))[0][0] == 150
    finally:
        await release(db)


@pytest.mark.parametrize("shared", [False, True])
async def test_savepoints_of_a_group_roll_back_in_memory(tmp_path: Path, shared: bool) -> None:
    """Sub-journals (a job's savepoint within its group) and sorts are kept in memory (no temp file per group
    in /var/tmp); a job that fails after writing many pages still leaves nothing, its group's others land."""
    db = open_database(tmp_path / "a.db", "t", SHARED) if shared else open_database(tmp_path / "a.db", "t")
    try:
        await db.migrate(SCHEMA)
        assert await db.query("PRAGMA temp_store") == [(2,)]  # MEMORY
        insert = "INSERT INTO t (x) VALUES (?)"

        def job(i: int) -> list[Statement]:
            # ~200 KB of pages each, past the in-memory journal's spill size; every third ends in a duplicate
            rows = [Statement(insert, (f"{i}-{k}-" + "x" * 1000,)) for k in range(200)]
            return rows + ([Statement(insert, (f"{i}-0-" + "x" * 1000,))] if i % 3 == 0 else [])

        before = db.commits
        results = await asyncio.gather(*[db.run(job(i)) for i in range(30)], return_exceptions=True)
        failed = {i for i, r in enumerate(results) if isinstance(r, Exception)}
        assert failed == {i for i in range(30) if i % 3 == 0}
        assert db.commits - before < 30  # they shared commits (savepoints were used)
        got = {x.split("-")[0] for (x,) in await db.query("SELECT x FROM t")}
        assert got == {str(i) for i in range(30) if i % 3}
        assert (await db.query("SELECT COUNT(*) FROM t"))[0][0] == 200 * 20
        assert db.health.ok
    finally:
        await release(db)


async def test_a_bad_job_alone_in_its_group_fails_alone(tmp_path: Path) -> None:
    """One write at a time (each alone in its commit group, no savepoint): a failing one leaves nothing of
    itself, its error is the caller's, and the store goes on."""
    db = open_database(tmp_path / "a.db", "t")
    try:
        await db.migrate(SCHEMA)
        await db.write("INSERT INTO t (x) VALUES (?)", ("a",))
        insert = "INSERT INTO t (x) VALUES (?)"
        two = [Statement(insert, ("b",)), Statement(insert, ("a",))]
        with pytest.raises(Exception, match="UNIQUE"):
            await db.run(two)  # its first statement ran before the second failed: undone with it
        assert db.health.ok
        await db.write("INSERT INTO t (x) VALUES (?)", ("c",))
        assert [r[0] for r in await db.query("SELECT x FROM t ORDER BY id")] == ["a", "c"]
        await release(db)
        db = open_database(tmp_path / "a.db", "t")
        assert [r[0] for r in await db.query("SELECT x FROM t ORDER BY id")] == ["a", "c"]
    finally:
        await release(db)


async def test_consume_is_single_use_under_concurrency(tmp_path: Path) -> None:
    db = open_database(tmp_path / "a.db", "t")
    try:
        await db.migrate(SCHEMA)
        await db.run([Statement("INSERT INTO t (x) VALUES (?)", [(f"k{i}",) for i in range(20)], many=True)])
        got = await asyncio.gather(*[db.consume("DELETE FROM t WHERE x = ? RETURNING id", (f"k{i % 20}",))
                                     for i in range(100)])
        assert sum(1 for rows in got if rows) == 20  # each key consumed exactly once
    finally:
        await release(db)


async def test_a_deleted_file_degrades_then_is_recreated_with_its_schema(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    db = open_database(path, "t")
    try:
        await db.migrate(SCHEMA)
        await db.write("INSERT INTO t (x) VALUES ('before')")
        os.unlink(path)
        with pytest.raises(StorageError, match="deleted or replaced"):
            await db.write("INSERT INTO t (x) VALUES ('lost')")
        assert not db.health.ok and "deleted" in db.health.cause
        await db.write("INSERT INTO t (x) VALUES ('after')")  # re-created, schema applied again
        assert db.health.ok and path.exists()
        assert await db.query("SELECT x FROM t") == [("after",)]
    finally:
        await release(db)


@pytest.mark.skipif(shutil.which("chattr") is None, reason="needs chattr")
async def test_an_immutable_file_is_a_fault_not_a_crash_and_recovers(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    db = open_database(path, "t")
    files = [path, path.with_name("a.db-wal")]
    try:
        await db.migrate(SCHEMA)
        await db.write("INSERT INTO t (x) VALUES ('one')")
        assert not path.with_name("a.db-shm").exists()  # no shared-memory file to be mapped (no SIGBUS)
        if subprocess.run(["chattr", "+i", *map(str, files)], capture_output=True).returncode != 0:
            pytest.skip("this file system does not support the immutable attribute")
        with pytest.raises(StorageError):
            await db.write("INSERT INTO t (x) VALUES ('two')")
        assert not db.health.ok
        assert not await db.probe()
        subprocess.run(["chattr", "-i", *map(str, files)], check=True)
        assert await db.probe() and db.health.ok
        await db.write("INSERT INTO t (x) VALUES ('three')")
        assert [r[0] for r in await db.query("SELECT x FROM t ORDER BY id")] == ["one", "three"]
    finally:
        subprocess.run(["chattr", "-i", *map(str, files)], capture_output=True)
        await release(db)


async def test_another_process_reads_a_held_file_through_a_consistent_copy(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    db = open_database(path, "t")
    try:
        await db.migrate(SCHEMA)
        await asyncio.gather(*[db.write("INSERT INTO t (x) VALUES (?)", (str(i),)) for i in range(50)])
        code = ("import sys, sqlite3; from pathlib import Path; from sentinel_mcp.storage.snapshot import "
                "read_connection\nwith read_connection(Path(sys.argv[1])) as c: "
                "print(c.execute('SELECT COUNT(*) FROM t').fetchone()[0])")
        out = await asyncio.to_thread(subprocess.run, [sys.executable, "-c", code, str(path)],
                                      capture_output=True, text=True, timeout=60)
        assert out.stdout.strip() == "50", out.stderr
        # the plain way in is refused while the gateway holds it: that is what the copy is for
        import sqlite3
        conn = sqlite3.connect(path, timeout=0.1)
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            conn.execute("SELECT COUNT(*) FROM t").fetchone()
        conn.close()
    finally:
        await release(db)


async def test_a_group_is_handed_back_at_once_each_caller_its_own_answer(tmp_path: Path) -> None:
    """The writer answers a whole group with one wake-up of the loop: every caller still gets its own result
    (reads, writes, errors mixed), a caller cancelled meanwhile changes nothing for the others, and a group
    of many jobs is answered with far fewer hand-overs than jobs."""
    db = open_database(tmp_path / "h.db", "t")
    try:
        await db.migrate(SCHEMA)
        loop = asyncio.get_running_loop()
        handed = 0
        real = loop.call_soon_threadsafe

        def counting(callback, *args):  # noqa: ANN001, ANN202
            nonlocal handed
            handed += 1
            return real(callback, *args)

        loop.call_soon_threadsafe = counting  # type: ignore[method-assign]
        try:
            jobs = []
            for i in range(200):
                if i % 3 == 0:
                    jobs.append(db.query("SELECT ?", (i,)))
                else:
                    jobs.append(db.write("INSERT INTO t (x) VALUES (?)", (str(i % 100),)))
            doomed = asyncio.ensure_future(db.write("INSERT INTO t (x) VALUES ('cancelled')"))
            doomed.cancel()
            results = await asyncio.gather(*jobs, return_exceptions=True)
        finally:
            del loop.call_soon_threadsafe
        for i, r in enumerate(results):
            if i % 3 == 0:
                assert r == [(i,)]  # each read its own row, not a neighbour's
        writes = [r for i, r in enumerate(results) if i % 3]
        failed = [r for r in writes if isinstance(r, Exception)]
        assert failed and all("UNIQUE" in str(e) for e in failed)
        stored = await db.query("SELECT COUNT(*) FROM t WHERE x != 'cancelled'")
        assert len(writes) - len(failed) == stored[0][0]
        assert handed < len(jobs)  # answered by groups, not one wake-up per job
    finally:
        await release(db)


_KILLED_WRITER = """
import asyncio, os, sys
from pathlib import Path
from sentinel_mcp.storage import Schema, open_database
SCHEMA = Schema("t", {"sqlite": ["CREATE TABLE t (id INTEGER PRIMARY KEY, x TEXT UNIQUE)"]})
async def main():
    db = open_database(Path(sys.argv[1]), "t")
    await db.migrate(SCHEMA)
    for i in range(int(sys.argv[2]), int(sys.argv[2]) + 40):
        await db.write("INSERT INTO t (x) VALUES (?)", (str(i),))
    print(os.path.getsize(sys.argv[1] + "-wal"), flush=True)
    os._exit(0)  # like kill -9: no close, no checkpoint; the log holds the only copy of the rows
asyncio.run(main())
"""


async def test_the_write_ahead_log_starts_full_size_and_loses_nothing_when_killed(tmp_path: Path) -> None:
    """The log is grown to its checkpoint size at start (commits then do not pay for the file's growth); the
    frames that growing leaves carry no commit, so a writer killed after its commits loses none of them, the
    next start recovers them and grows nothing twice, and the database holds no trace of the growing."""
    path = tmp_path / "a.db"
    sizes = []
    for start in (0, 40):
        command = [sys.executable, "-c", _KILLED_WRITER, str(path), str(start)]
        out = await asyncio.to_thread(subprocess.run, command, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        sizes.append(int(out.stdout.strip()))
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        page = conn.execute("PRAGMA page_size").fetchone()[0]
        assert all(s >= 1000 * page for s in sizes), sizes  # full size from the first commit on
        assert conn.execute("SELECT COUNT(*), COUNT(DISTINCT x) FROM t").fetchone() == (80, 80)
        assert sorted(r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")) == [
            "storage_schema", "t"]
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()


async def test_stores_are_the_owners_only_whatever_the_umask(tmp_path: Path) -> None:
    """A new store's directories are 0700, its file and its journals 0600, under a permissive umask; an
    existing store of ours that others could read is tightened; a directory the user made keeps its mode."""
    old = os.umask(0o002)
    try:
        for options, journal in ((None, "-wal"), ("shared", "-journal")):
            base = tmp_path / f"new-{journal}"
            path = base / "deep" / "er" / "a.db"
            db = open_database(path, "t", SHARED) if options else open_database(path, "t")
            try:
                await db.migrate(SCHEMA)
                await db.write("INSERT INTO t (x) VALUES (?)", ("a",))
                for d in (base, base / "deep", base / "deep" / "er"):
                    assert oct(d.stat().st_mode & 0o777) == "0o700", d
                assert oct(path.stat().st_mode & 0o777) == "0o600"
                side = Path(str(path) + journal)
                if side.exists():
                    assert oct(side.stat().st_mode & 0o777) == "0o600", side
            finally:
                await release(db)
        mine = tmp_path / "mine"
        mine.mkdir(mode=0o755)
        os.chmod(mine, 0o755)
        loose = mine / "b.db"
        loose.write_bytes(b"")
        os.chmod(loose, 0o644)
        db = open_database(loose, "t")
        try:
            await db.migrate(SCHEMA)
            assert oct(loose.stat().st_mode & 0o777) == "0o600"
            assert oct(mine.stat().st_mode & 0o777) == "0o755"
        finally:
            await release(db)
    finally:
        os.umask(old)


FOREIGN_UID = 1000  # "another user": the tests run as root, which may chown


def _symlinked_file(d: Path) -> Path:
    target = d.parent / "elsewhere.db"
    target.write_bytes(b"")
    os.chmod(target, 0o644)
    (d / "a.db").symlink_to(target)
    return target


def _symlinked_wal(d: Path) -> Path:
    target = d.parent / "elsewhere-wal"
    target.write_bytes(b"")
    (d / "a.db-wal").symlink_to(target)
    return target


def _foreign_file(d: Path) -> Path:
    f = d / "a.db"
    f.write_bytes(b"")
    os.chmod(f, 0o666)
    os.chown(f, FOREIGN_UID, FOREIGN_UID)
    return f


def _foreign_journal(d: Path) -> Path:
    f = d / "a.db-journal"
    f.write_bytes(b"")
    os.chown(f, FOREIGN_UID, FOREIGN_UID)
    return f


def _others_may_write_the_dir(d: Path) -> Path:
    os.chmod(d, 0o777)
    return d


def _dir_of_another_user(d: Path) -> Path:
    os.chown(d, FOREIGN_UID, FOREIGN_UID)
    return d


def _another_groups_dir(d: Path) -> Path:
    os.chown(d, os.geteuid(), FOREIGN_UID)
    os.chmod(d, 0o770)
    return d


@pytest.mark.skipif(os.geteuid() != 0, reason="making a file another user's needs root")
@pytest.mark.parametrize(
    "plant",
    [_symlinked_file, _symlinked_wal, _foreign_file, _foreign_journal, _others_may_write_the_dir,
     _dir_of_another_user, _another_groups_dir],
)
async def test_a_store_another_user_could_have_planted_is_refused_and_nothing_is_written_through(
    tmp_path: Path, plant: object
) -> None:
    """A store file that is a symlink (SQLite follows it), another user's file, a side file (-wal, -journal)
    planted as either, or a directory others may write: the store is refused (degraded: calls are refused),
    saying which path and why, and nothing is written to what was planted."""
    d = tmp_path / "data"
    d.mkdir(mode=0o700)
    planted = plant(d)  # type: ignore[operator]
    before = planted.read_bytes() if planted.is_file() else None
    db = open_database(d / "a.db", "t")
    try:
        with pytest.raises(StorageError) as e:
            await db.migrate(SCHEMA)
        assert str(planted.name) in str(e.value) or str(d) in str(e.value), e.value
        assert not db.health.ok
    finally:
        await release(db)
    if before is not None:
        assert planted.read_bytes() == before


async def test_a_directory_of_the_users_own_group_may_be_group_writable(tmp_path: Path) -> None:
    d = tmp_path / "data"
    d.mkdir(mode=0o700)
    os.chmod(d, 0o770)  # umask 002 with a private group: the user's own group
    db = open_database(d / "a.db", "t")
    try:
        await db.migrate(SCHEMA)
        await db.write("INSERT INTO t (x) VALUES (?)", ("a",))
    finally:
        await release(db)
