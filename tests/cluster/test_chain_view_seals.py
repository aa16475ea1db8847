"""The console's chain status (``console/chain_view.py``, the Activity and proof pages' "hash chain") checks
each row's seal (MAC) as ``audit verify`` does: a row relabelled to another principal and re-chained by the
store's writer, or whose MAC was wiped after sealed rows, is where its chain breaks. Before, the chain read
"verified" on every row while the row's MAC failed. Real SQLite (through the open log, and a file no process
holds) and real PostgreSQL (one replica's chain); the edits are plain SQL."""

from __future__ import annotations

from pathlib import Path

import pytest

from sentinel_mcp.console import chain_view
from sentinel_mcp.gateway.audit import AuditEntry, AuditLog

from .test_audit_rows_sealed import KEY, rechain, sql

pytestmark = pytest.mark.timeout(120)
CHAIN = "replica-a"

EDITS = {
    "relabelled": "UPDATE audit SET principal = 'alice' WHERE id = ?",
    "mac moved": "UPDATE audit SET principal = 'alice', mac = (SELECT MIN(mac) FROM audit "
                 "WHERE principal = 'alice') WHERE id = ?",
    "mac wiped": "UPDATE audit SET mac = NULL WHERE id = ?",
    "mac not hex": "UPDATE audit SET mac = 'é' WHERE id = ?",
}


async def statuses(location: str, log: AuditLog | None,
                   key: bytes | None) -> dict[str, chain_view.ChainStatus]:
    if location.startswith("postgresql://"):
        assert log is not None
        return await chain_view.shared_statuses(log.db, key)
    return await chain_view.statuses(Path(location), key)


async def write(log: AuditLog, who: list[str]) -> None:
    for p in who:
        await log.write(AuditEntry(session=f"{p}/c", principal=p, tool="t", decision="allow", outcome="ok"))


@pytest.mark.parametrize("edit", sorted(EDITS))
async def test_a_row_whose_seal_fails_breaks_the_chain_view(store_location: str, edit: str) -> None:
    chain_view._CACHE.clear()
    chain_view._CLOSED.clear()
    log = await AuditLog(store_location, chain=CHAIN, key=KEY).open()
    try:
        await write(log, ["alice", "bob", "alice", "bob"])
        found = await statuses(store_location, log, KEY)
        assert found[CHAIN].problem is None, found
    finally:
        await log.close()  # (a SQLite log open here holds its file exclusively)
    [(victim,)] = sql(store_location, "SELECT MIN(id) FROM audit WHERE principal = 'bob'")
    sql(store_location, EDITS[edit], (victim,))
    rechain(store_location, CHAIN)
    log = await AuditLog(store_location, chain=CHAIN, key=KEY).open()
    try:
        await write(log, ["alice"])  # the view checks what is new since; the full check finds the edit
        chain_view._CACHE.clear()  # (the periodic full check, at once)
        found = await statuses(store_location, log, KEY)
        # without the key the view is the chain's alone, which the re-chained edit passes
        chain_view._CACHE.clear()
        assert (await statuses(store_location, log, None))[CHAIN].problem is None
    finally:
        await log.close()
    status = found[CHAIN]
    assert status.broken_row == victim and "seal (MAC)" in (status.problem or ""), status
    assert status.of(victim - 1) == "verified" and status.of(victim) == f"broken at row {victim}"
    if not store_location.startswith("postgresql://"):  # the file no process holds now: read as the CLI does
        chain_view._CLOSED.clear()
        closed = (await chain_view.statuses(Path(store_location), KEY))[CHAIN]
        assert closed.broken_row == victim and "seal (MAC)" in (closed.problem or ""), closed


async def test_new_rows_edited_are_found_by_the_incremental_check(store_location: str) -> None:
    """A row written after the last page view, then its MAC replaced, is found without a full check."""
    chain_view._CACHE.clear()
    log = await AuditLog(store_location, chain=CHAIN, key=KEY).open()
    try:
        await write(log, ["alice", "bob"])
        assert (await statuses(store_location, log, KEY))[CHAIN].problem is None
        await write(log, ["bob"])
        [(victim,)] = await log.db.query("SELECT MAX(id) FROM audit")
        # through the log's own connection (a SQLite log open here holds its file exclusively)
        await log.db.write("UPDATE audit SET mac = UPPER(mac) WHERE id = ?", (victim,))
        await write(log, ["alice"])
        found = await statuses(store_location, log, KEY)
    finally:
        await log.close()
    assert found[CHAIN].broken_row == victim, found[CHAIN]


async def test_rows_from_before_the_seal_do_not_break_the_view(store_location: str) -> None:
    chain_view._CACHE.clear()
    log = await AuditLog(store_location, chain=CHAIN, key=None).open()
    try:
        await write(log, ["owner", "owner"])
    finally:
        await log.close()
    log = await AuditLog(store_location, chain=CHAIN, key=KEY).open()
    try:
        await write(log, ["alice"])
        found = await statuses(store_location, log, KEY)
    finally:
        await log.close()
    assert found[CHAIN].problem is None, found[CHAIN]
