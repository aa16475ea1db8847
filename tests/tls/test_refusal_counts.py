"""Refused certificates past the audit's burst are counted, and the count reaches the audit log on its own:
when the window ends, and when the gateway stops. Red team "tls2": the count was written only with the next
refusal after the window, so a scanner's burst followed by silence (or a stop) left 30 rows and no trace of
the rest."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from sentinel_mcp.gateway.audit import AuditLog
from sentinel_mcp.tls.refusals import RefusalLog


async def _rows(audit: AuditLog, log: RefusalLog) -> list[dict[str, Any]]:
    while log._pending:
        await asyncio.gather(*list(log._pending))
    return list(await audit.read(tail=50))


async def test_the_count_of_a_burst_is_written_when_its_window_ends(tmp_path: Path) -> None:
    audit = await AuditLog(tmp_path / "audit.db").open()
    try:
        log = RefusalLog(lambda: audit, burst=3, window=0.2)
        for i in range(10):
            log.record(f"10.0.0.{i}", "client certificate refused: unknown ca")
        # nothing more is refused: the window's end alone writes the count (bounded wait, never a threshold)
        for _ in range(200):
            rows = await _rows(audit, log)
            if len(rows) > 3:
                break
            await asyncio.sleep(0.05)
        assert len(rows) == 4, rows
        assert "7 more certificate refusals" in rows[3]["reason"]
        assert log.suppressed == 0
        log.record("10.0.0.99", "client certificate refused: unknown ca")  # a new window, written at once
        rows = await _rows(audit, log)
        assert len(rows) == 5 and rows[4]["client"] == "10.0.0.99"
    finally:
        await audit.close()


async def test_the_count_is_written_when_the_gateway_stops(tmp_path: Path) -> None:
    audit = await AuditLog(tmp_path / "audit.db").open()
    try:
        log = RefusalLog(lambda: audit, burst=2, window=3600)
        for i in range(6):
            log.record(f"10.0.0.{i}", "client certificate refused: certificate has expired")
        await log.flush()
        rows = await _rows(audit, log)
        assert len(rows) == 3 and "4 more certificate refusals" in rows[2]["reason"], rows
        await log.flush()  # twice: nothing more
        assert len(await _rows(audit, log)) == 3
    finally:
        await audit.close()
