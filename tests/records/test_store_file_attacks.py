"""The audit file, its write-ahead log or its directory changed under a running writer, every way a clean-up
script, a sync tool or an intruder can: the next row is refused (``StorageError``), never committed to a file
no reader opens. The rows' file checks (``SqliteStore._ensure_connection``: the path's ``stat``, the log's
``lstat``) are what notice; a cheaper check must keep every case here failing its row (issue 21). Changes that
leave the same files in place (a backup hard link, a touched directory) must not refuse a row."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Callable

import pytest

from sentinel_mcp.gateway.audit import AuditEntry, AuditLog
from sentinel_mcp.storage import StorageError

Attack = Callable[[Path, Path], None]  # (the audit file, another audit file of the same schema)


def _entry(n: int) -> AuditEntry:
    return AuditEntry(session="s", tool="t", decision="allow", outcome="ok", arguments={"n": n})


def _renamed_over(path: Path, other: Path) -> None:
    os.replace(other, path)


def _hard_link_over(path: Path, other: Path) -> None:
    link = other.with_name("linked.db")
    os.link(other, link)
    os.replace(link, path)


def _symlink_over(path: Path, other: Path) -> None:
    link = other.with_name("pointer.db")
    os.symlink(other, link)
    os.replace(link, path)


def _cut_to_nothing(path: Path, other: Path) -> None:
    os.truncate(path, 0)


def _cut_by_a_page(path: Path, other: Path) -> None:
    os.truncate(path, path.stat().st_size - 4096)


def _deleted(path: Path, other: Path) -> None:
    path.unlink()


def _directory_moved_away(path: Path, other: Path) -> None:
    os.rename(path.parent, path.parent.with_name("moved"))
    path.parent.mkdir()


def _directory_moved_copy_in_place(path: Path, other: Path) -> None:
    os.rename(path.parent, path.parent.with_name("moved"))
    path.parent.mkdir()
    shutil.copyfile(other, path)


def _directory_moved_same_file_linked_back(path: Path, other: Path) -> None:
    # the database file is the same inode at the same path; its log is not there any more
    moved = path.parent.with_name("moved")
    os.rename(path.parent, moved)
    path.parent.mkdir()
    os.link(moved / path.name, path)


def _directory_swapped_for_a_symlink(path: Path, other: Path) -> None:
    os.rename(path.parent, path.parent.with_name("moved"))
    os.symlink(other.parent, path.parent)


def _log_hard_linked_away_and_replaced(path: Path, other: Path) -> None:
    wal = Path(f"{path}-wal")
    os.link(wal, wal.with_name("kept-wal"))
    os.replace(other, wal)  # another file, its own inode, at the log's path


ATTACKS: dict[str, Attack] = {
    "renamed over": _renamed_over,
    "hard link renamed over": _hard_link_over,
    "symlink renamed over": _symlink_over,
    "cut to nothing": _cut_to_nothing,
    "cut by a page": _cut_by_a_page,
    "deleted": _deleted,
    "directory moved away": _directory_moved_away,
    "directory moved, a copy in place": _directory_moved_copy_in_place,
    "directory moved, the same file linked back": _directory_moved_same_file_linked_back,
    "directory swapped for a symlink": _directory_swapped_for_a_symlink,
    "log hard-linked away and replaced": _log_hard_linked_away_and_replaced,
}


async def _other_store(tmp_path: Path) -> Path:
    """Another audit file of the same schema, with rows of its own, as an intruder would bring."""
    other = tmp_path / "elsewhere" / "sentinel.db"
    other.parent.mkdir()
    log = await AuditLog(other, chain="other").open()
    try:
        for n in range(40):
            await log.write(_entry(n))
    finally:
        await log.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{other}{suffix}").unlink(missing_ok=True)
    return other


async def _written(tmp_path: Path) -> tuple[AuditLog, Path]:
    path = tmp_path / "data" / "sentinel.db"
    path.parent.mkdir()
    log = await AuditLog(path, chain="a").open()
    for n in range(40):  # a file of several pages, its log in use
        await log.write(_entry(n), alone=n % 2 == 0)
    assert Path(f"{path}-wal").stat().st_size > 0
    return log, path


@pytest.mark.parametrize("attack", list(ATTACKS))
async def test_the_file_changed_under_the_writer_refuses_the_next_row(tmp_path: Path, attack: str) -> None:
    other = await _other_store(tmp_path)
    log, path = await _written(tmp_path)
    try:
        ATTACKS[attack](path, other)
        with pytest.raises(StorageError):
            await log.write(_entry(100))
    finally:
        await log.close()


@pytest.mark.parametrize("alone", [True, False])
async def test_each_attack_refuses_the_row_written_alone_or_batched(tmp_path: Path, alone: bool) -> None:
    """The inline commit (``alone``) and the writer thread's batch are guarded by the same checks."""
    other = await _other_store(tmp_path)
    log, path = await _written(tmp_path)
    try:
        _renamed_over(path, other)
        with pytest.raises(StorageError, match="deleted or replaced"):
            await log.write(_entry(100), alone=alone)
    finally:
        await log.close()


def _mount_bind(source: Path, target: Path) -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    return subprocess.run(["mount", "--bind", str(source), str(target)], capture_output=True).returncode == 0


@pytest.mark.parametrize("what", ["directory", "file"])
async def test_another_directory_or_file_bound_over_the_store_refuses_the_next_row(
    tmp_path: Path, what: str
) -> None:
    other = await _other_store(tmp_path)
    log, path = await _written(tmp_path)
    target = path.parent if what == "directory" else path
    source = other.parent if what == "directory" else other
    mounted = _mount_bind(source, target)
    try:
        if not mounted:
            pytest.skip("bind mounts need root and a mount namespace that allows them")
        with pytest.raises(StorageError):
            await log.write(_entry(100))
    finally:
        if mounted:
            subprocess.run(["umount", str(target)], check=True)
        await log.close()


@pytest.mark.parametrize("change", ["a backup hard link", "the directory touched", "a file added beside it"])
async def test_a_change_that_leaves_the_same_files_in_place_refuses_nothing(
    tmp_path: Path, change: str
) -> None:
    log, path = await _written(tmp_path)
    try:
        if change == "a backup hard link":
            os.link(path, path.with_name("backup.db"))
        elif change == "the directory touched":
            os.utime(path.parent, (0, 0))
        else:
            path.with_name("notes.txt").write_text("x")
        for n in range(100, 105):
            await log.write(_entry(n), alone=n % 2 == 0)
    finally:
        await log.close()
