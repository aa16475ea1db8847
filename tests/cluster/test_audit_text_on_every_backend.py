"""What a caller or an upstream spells is recorded on every backend: PostgreSQL's ``text`` cannot hold a NUL
character, which SQLite keeps. A tool name, session, client name, reason or error with a NUL in it must still
leave its row (the attempt is in the log, chained, verifiable), and a row the store refuses for its own
content must fail closed as a record failure (``StorageError``: "could not record"), never as an internal
error of the server with a traceback and no row."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from sentinel_mcp.gateway.audit import AuditEntry, AuditLog
from sentinel_mcp.gateway.audit_chain import verify_file
from sentinel_mcp.gateway.audit_cluster import verify_server
from sentinel_mcp.storage import StorageError

FIELDS = ("tool", "session", "client", "reason", "error", "principal", "policy_version", "upstream")
SPELLINGS = ("a\x00b", "\x00", "x" * 10 + "\x00", "caf\u00e9\x00\udc80")


def _verify(location: str):
    return verify_server(location) if location.startswith("postgresql://") else verify_file(Path(location))


@pytest.mark.parametrize("field", FIELDS)
async def test_a_nul_in_any_text_of_a_row_is_recorded_and_chained(store_location: str, field: str) -> None:
    log = await AuditLog(store_location, chain="replica-a").open()  # type: ignore[arg-type]
    try:
        ids = []
        for text in SPELLINGS:
            entry = AuditEntry(session="s", tool="t", decision="deny", outcome="denied")
            setattr(entry, field, text)
            ids.append(await log.write(entry))
        ids.append(await log.write(AuditEntry(session="s", tool="t", decision="deny", outcome="denied")))
        stored = {r["decision_id"]: r for r in await log.read(tail=50)}
        assert set(ids) <= set(stored)
        for rid in ids[:-1]:
            value = stored[rid][field]
            assert isinstance(value, str) and "\x00" not in value and "\\x00" in value
        assert log.db.health.ok
    finally:
        await log.close()
    report = await asyncio.to_thread(_verify, store_location)
    assert report.ok and report.rows == len(SPELLINGS) + 1, report


async def test_a_row_the_store_refuses_fails_closed_as_a_record_failure(store_location: str) -> None:
    log = await AuditLog(store_location, chain="replica-a").open()  # type: ignore[arg-type]
    try:
        # a number neither backend can hold (SQLite: past 64 bits; PostgreSQL: past a double): the store's
        # own refusal of this row, not a fault of the store
        with pytest.raises(StorageError, match="could not be stored"):
            await log.write(AuditEntry(session="s", tool="t", decision="deny", outcome="denied",
                                       latency_ms=2**1100))  # type: ignore[arg-type]
        assert log.db.health.ok
        await log.write(AuditEntry(session="s", tool="t", decision="deny", outcome="denied"))
    finally:
        await log.close()
    report = await asyncio.to_thread(_verify, store_location)
    assert report.ok and report.rows == 1, report
