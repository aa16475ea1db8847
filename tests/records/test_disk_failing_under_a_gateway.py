"""The disk under a running gateway fails in ways the other records tests do not make: a real file system
that fills up (ENOSPC on a small tmpfs, where ``test_disk_full_under_load.py`` uses a file size limit that
never lifts) and empties again, and the audit file truncated in place (same inode: neither deleted nor
replaced), or a shared store cut to nothing. Each refuses calls with the cause, runs nothing it did not
record, and ``audit verify`` names what was lost; a disk with room again is written again by itself."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from tests.conftest import free_port
from tests.support.cli_in_process import run_main

from .rig import RECORDER, audit_rows, executed

pytestmark = pytest.mark.timeout(180)



def gateway_config(tmp: Path, data: Path):  # noqa: ANN201 - the parsed Config
    import sys

    return parse_config({"mcpServers": {"rec": {"command": sys.executable, "args": [RECORDER],
                                                "env": {"RECORDER_LOG": str(tmp / "executed.log")}}},
                         "sentinel": {"data_dir": str(data), "builtins": []}},
                        source="<test>", base_dir=tmp)


def verify(tmp: Path, data: Path) -> subprocess.CompletedProcess:
    cfg = tmp / "verify.json"
    cfg.write_text(json.dumps({"sentinel": {"data_dir": str(data), "builtins": []}}))
    return run_main(["-c", str(cfg), "audit", "verify"])


def marks_of(rows: list[dict]) -> set[str]:
    return {json.loads(r["arguments"])["mark"] for r in rows if r["event"] == "decision"}


@pytest.fixture
def small_disk(tmp_path: Path):  # noqa: ANN201 - a mounted directory
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("needs root to mount a small file system")
    mnt = tmp_path / "disk"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=6m,mode=0700", "tmpfs", str(mnt)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


async def test_a_full_file_system_refuses_with_its_cause_and_is_written_again_once_it_has_room(
    tmp_path: Path, small_disk: Path
) -> None:
    data = small_disk / "data"
    answered: list[str] = []
    refused: dict[str, str] = {}
    async with running_gateway(gateway_config(tmp_path, data)) as rt:
        async with Client(rt.front.server) as c:
            assert not (await c.call_tool("rec__do", {"mark": "first"})).is_error
            filler = small_disk / "filler"
            fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)  # the rest of the disk, another program's
            try:
                while os.write(fd, b"\0" * 65536):
                    pass
            except OSError:
                pass
            finally:
                os.close(fd)
            for i in range(2000):  # bounded: the write-ahead log's room is a few MB (~150 calls)
                mark = f"full-{i}"
                r = await c.call_tool("rec__do", {"mark": mark})
                if r.is_error:
                    refused[mark] = r.content[0].text
                    if len(refused) >= 3:
                        break
                else:
                    answered.append(mark)
            assert len(refused) >= 3, "the disk never filled"
            texts = list(refused.values())
            # said why: the cause names the full disk, at the commit that failed and at the gate after it
            assert all("record" in t for t in texts), texts
            assert any("disk is full" in t for t in texts), texts
            filler.unlink()
            deadline = time.monotonic() + 15
            for i in range(1000):  # probed back to health by the next calls (bounded), without a restart
                r = await c.call_tool("rec__do", {"mark": f"again-{i}"})
                if not r.is_error:
                    answered.append(f"again-{i}")
                    break
                if time.monotonic() > deadline:
                    break
                await anyio.sleep(0.1)
            assert answered[-1].startswith("again-"), r.content[0].text
    rows = audit_rows(data / "sentinel.db")
    decided = marks_of(rows)
    ran = executed(tmp_path)
    assert [m for m in answered + ["first"] if m not in decided] == []
    assert [m for m in ran if m not in decided] == []  # nothing ran that was not first recorded
    told_it_ran = {m for m, t in refused.items() if "ran, but Sentinel could not record its outcome" in t}
    assert (set(refused) & set(ran)) - told_it_ran == set()
    check = verify(tmp_path, data)
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.mark.parametrize("cut", ["to nothing", "to half"])
async def test_the_audit_file_truncated_in_place_is_refused_named_and_never_taken_for_whole(
    tmp_path: Path, cut: str
) -> None:
    data = tmp_path / "data"
    async with running_gateway(gateway_config(tmp_path, data)) as rt:
        db = rt.gateway.audit.db
        # the gateway's own commits fold its rows into the file often (as under load), so the cut takes rows
        # it committed, and it is made between two commits, as another program would make it
        await db.query("PRAGMA wal_autocheckpoint=8")
        async with Client(rt.front.server) as c:
            for i in range(60):
                assert not (await c.call_tool("rec__do", {"mark": f"kept-{i}"})).is_error
            store = Path(db.path)
            size = store.stat().st_size
            assert size > 8 * 4096, size
            ino = store.stat().st_ino
            os.truncate(store, 0 if cut == "to nothing" else size // 2)
            assert store.stat().st_ino == ino  # the same file: not replaced, not deleted
            after = {}
            for i in range(6):
                r = await c.call_tool("rec__do", {"mark": f"after-{i}"})
                after[f"after-{i}"] = r
            first = after["after-0"]
            # the first call after the cut is never answered as recorded onto rows that are gone
            assert first.is_error and "record" in first.content[0].text, first.content[0].text
    ran = executed(tmp_path)
    refused = {m for m, r in after.items() if r.is_error}
    assert refused & set(ran) == set()  # refused, so not run
    check = verify(tmp_path, data)
    out = check.stdout + check.stderr
    # never 'intact': the rows the gateway committed and lost are said, or the damaged file is named
    assert check.returncode == 1 and "BROKEN" in out and "Traceback" not in out, out
    if cut == "to nothing":
        # the anchor names the loss: fewer rows than it holds ("were anchored"), or, once the re-created
        # file's new rows reach an anchored count, a hash that is not the anchored one (when the anchor last
        # recorded decides which)
        assert "were anchored" in out or "is not the one anchored" in out, out
        assert [m for m in ran if m.startswith("after-")] == [m for m, r in after.items() if not r.is_error]
    else:
        assert str(store) in out, out


async def test_a_shared_store_cut_to_nothing_in_place_is_refused_then_made_again_with_its_schema(
    tmp_path: Path,
) -> None:
    """As a store deleted under its writer (``test_storage_seam.py``): the shared fact store (a rollback
    journal) cut to nothing answered every write "no such table" with its health ok, never re-created."""
    from sentinel_mcp.storage import Schema, StorageError, open_database
    from sentinel_mcp.storage.open import release
    from sentinel_mcp.storage.sqlite import SHARED

    path = tmp_path / "a.db"
    db = open_database(path, "t", SHARED)
    try:
        await db.migrate(Schema("t", {"sqlite": ["CREATE TABLE t (id INTEGER PRIMARY KEY, x TEXT)"]}))
        for i in range(200):
            await db.write("INSERT INTO t (x) VALUES (?)", (f"before-{i}",))
        os.truncate(path, 0)
        with pytest.raises(StorageError, match="truncated"):
            await db.write("INSERT INTO t (x) VALUES ('lost')")
        assert not db.health.ok and "truncated" in db.health.cause
        await db.write("INSERT INTO t (x) VALUES ('after')")  # made again, its schema applied
        assert db.health.ok
        assert await db.query("SELECT x FROM t") == [("after",)]
    finally:
        await release(db)


async def test_a_small_file_system_is_not_filled_ahead_of_time_by_a_stores_write_ahead_log(
    small_disk: Path,
) -> None:
    """A store's write-ahead log is grown to its working size (~4 MB) at start for speed (``wal_presize``);
    on a 6 MB data dir that took the room the next stores needed, and ``serve --http`` refused to start."""
    from sentinel_mcp.storage import Schema, open_database
    from sentinel_mcp.storage.open import release
    from sentinel_mcp.storage.sqlite import EXCLUSIVE

    def free() -> int:
        fs = os.statvfs(small_disk)
        return fs.f_bavail * fs.f_frsize

    before = free()
    dbs = [open_database(small_disk / f"s{i}.db", f"s{i}", EXCLUSIVE) for i in range(3)]
    try:
        for i, db in enumerate(dbs):
            table = f"CREATE TABLE t{i} (id INTEGER PRIMARY KEY, x TEXT)"
            await db.migrate(Schema(f"s{i}", {"sqlite": [table]}))
            await db.write(f"INSERT INTO t{i} (x) VALUES ('kept')")
        assert before - free() < before // 4, (before, free())  # each took what it holds, not 4 MB ahead
        assert [await db.query(f"SELECT x FROM t{i}") for i, db in enumerate(dbs)] == [[("kept",)]] * 3
    finally:
        for db in dbs:
            await release(db)


async def test_a_schema_step_on_a_full_disk_says_the_disk_is_full(small_disk: Path) -> None:
    """SQLite ends a transaction itself when the disk fills; the migration's own ``ROLLBACK`` then raised
    "cannot rollback - no transaction is active" in place of the cause, and start-up died with a traceback."""
    from sentinel_mcp.storage import Schema, StorageError, open_database
    from sentinel_mcp.storage.open import release
    from sentinel_mcp.storage.sqlite import SHARED

    db = open_database(small_disk / "a.db", "t", SHARED)
    try:
        await db.migrate(Schema("t", {"sqlite": ["CREATE TABLE t (id INTEGER PRIMARY KEY, x TEXT)"]}))
        _fill(small_disk / "filler")
        # each fails on the full disk; the small one at its commit, where SQLite itself ends the transaction
        for step in ("INSERT INTO t (x) VALUES ('a')", "CREATE TABLE u (id INTEGER PRIMARY KEY, x TEXT)",
                     "INSERT INTO t (x) SELECT hex(zeroblob(8000)) FROM (SELECT 1 UNION SELECT 2)"):
            with pytest.raises(StorageError, match="disk is full"):
                await db.migrate(Schema(f"u{len(step)}", {"sqlite": [step]}))
    finally:
        await release(db)


def test_serve_http_on_a_full_disk_ends_with_the_cause_in_one_line_and_its_exit_code(
    tmp_path: Path, small_disk: Path
) -> None:
    """The gateway starts inside the ASGI lifespan: a store that cannot be written there was said as ~60 lines
    of Starlette's traceback and ended ``serve`` with uvicorn's exit code 3."""
    import sys

    cfg = tmp_path / "small.json"
    cfg.write_text(json.dumps({"sentinel": {"data_dir": str(small_disk / "data")}}))
    for secret in ("token", "console-secret"):  # made while there is room: what fails is the gateway's start
        assert run_main(["-c", str(cfg), "config", secret]).returncode == 0
    _fill(small_disk / "filler")
    port = free_port()
    done = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http",
                           f"127.0.0.1:{port}"], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    err = done.stderr
    assert done.returncode == 1, (done.returncode, err[-3000:])
    assert "Traceback" not in err and "File \"" not in err, err[-3000:]
    said = [line for line in err.splitlines() if line.startswith("sentinel-mcp: ")]
    assert len(said) == 1 and "disk is full" in said[0], err[-3000:]


def _fill(path: Path) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)  # the rest of the disk, another program's
    try:
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:
        pass
    finally:
        os.close(fd)
