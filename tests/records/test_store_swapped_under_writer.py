"""The audit file swapped (an older copy of itself) or deleted under a running gateway, between two of its
anchors. The gateway notices the file changed, refuses one call, and goes on with the file it now finds (its
design: the store recovers by itself). Before, the rows it had committed since its last anchor were gone
without a trace: ``audit verify`` said the log was intact though calls answered meanwhile were missing from
it. Now the gateway anchors the head it had committed before it chains onto what the file holds, so verify
says BROKEN, and calls go on."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable

import pytest

import sentinel_mcp.storage.open as store_open
from sentinel_mcp.gateway.audit import AuditEntry, AuditLog
from sentinel_mcp.gateway.audit_anchor import AnchorLog
from sentinel_mcp.gateway.audit_anchor_check import verify_anchored
from sentinel_mcp.gateway.audit_anchoring import Anchoring
from sentinel_mcp.storage import StorageError
from sentinel_mcp.storage.snapshot import readable_copy


def _entry(n: int) -> AuditEntry:
    return AuditEntry(session="s", tool="t", decision="allow", outcome="ok", arguments={"n": n})


def _older_copy(path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A whole copy of the file as it is now, as another process would take it."""
    with monkeypatch.context() as m:
        m.setattr(store_open, "find_open", lambda location: None)
        with readable_copy(path) as copy:
            kept = path.with_name("older.db")
            shutil.copyfile(copy, kept)
    return kept


def _swap_in(older: Path) -> Callable[[Path], None]:
    def swap(path: Path) -> None:
        os.replace(older, path)
        Path(f"{path}-wal").unlink(missing_ok=True)

    return swap


def _delete(path: Path) -> None:
    path.unlink()
    Path(f"{path}-wal").unlink(missing_ok=True)


@pytest.mark.parametrize("attack", ["older copy", "deleted"])
async def test_rows_lost_under_a_running_gateway_are_anchored_before_it_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, attack: str
) -> None:
    data = tmp_path / "data"
    path = data / "instances" / "a" / "sentinel.db"
    path.parent.mkdir(parents=True)
    anchor = AnchorLog(tmp_path / "anchor", data)
    log = await AuditLog(path, chain="a").open()
    anchoring = Anchoring(anchor, log, data / "sentinel.db", every=3600)  # no anchor but the ones below
    await anchoring.start()
    try:
        for n in range(3):
            await log.write(_entry(n))
        older = _older_copy(path, monkeypatch)
        for n in range(3, 10):  # answered: their rows are committed, not yet anchored
            await log.write(_entry(n), alone=n % 2 == 0)
        (_swap_in(older) if attack == "older copy" else _delete)(path)
        with pytest.raises(StorageError, match="deleted or replaced"):
            await log.write(_entry(10))
        for n in range(11, 14):  # the gateway goes on with the file it finds
            await log.write(_entry(n))
    finally:
        await anchoring.stop()
        await log.close()
    report = verify_anchored(data / "sentinel.db", anchor)
    assert not report.ok
    assert "but 10 were anchored" in (report.problem or ""), report.problem  # the 10 rows answered


async def test_a_writer_whose_rows_are_all_there_anchors_nothing_more(tmp_path: Path) -> None:
    """A head that moved under the writer onto its own rows (another writer of the chain, a failed write) is
    no loss: nothing is anchored for it and verify stays intact."""
    data = tmp_path / "data"
    path = data / "instances" / "a" / "sentinel.db"
    path.parent.mkdir(parents=True)
    anchor = AnchorLog(tmp_path / "anchor", data)
    log = await AuditLog(path, chain="a").open()
    other = AuditLog(path, chain="a")
    anchoring = Anchoring(anchor, log, data / "sentinel.db", every=3600)
    await anchoring.start()
    try:
        await other.open()  # the same store (one Database in this process), another writer of chain a
        for n in range(6):
            await (log if n % 2 else other).write(_entry(n))
        lines = anchor.path.read_text().count("\n")
        await log.write(_entry(6))
        assert anchor.path.read_text().count("\n") == lines
    finally:
        await anchoring.stop()
        await other.close()
        await log.close()
    assert verify_anchored(data / "sentinel.db", anchor).ok
