"""The gate in front of every call (``RecordsGate``) probes a degraded store one probe at a time and waits for
it at most ``PROBE_WAIT``: a store whose commits hang (PostgreSQL with its synchronous standby gone holds
every commit until the commit bound; here a real SQLite file another connection holds locked, its writer
waiting out a long busy timeout) made every refused call and every ``/healthz`` wait the whole bound, and
each started a probe of its own. The refusal still names the cause, and the store is taken back once a probe
goes through."""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import replace
from pathlib import Path

from sentinel_mcp.gateway.call_record import PROBE_WAIT, RecordsGate
from sentinel_mcp.storage import open_database
from sentinel_mcp.storage.open import release
from sentinel_mcp.storage.sqlite import SHARED

HELD = 120.0  # the writer's busy timeout: far past anything the gate may wait


async def test_a_hung_probe_neither_holds_calls_nor_multiplies(tmp_path: Path) -> None:
    path = tmp_path / "records.db"
    db = open_database(path, "records", replace(SHARED, busy_timeout_ms=int(HELD * 1000)))
    other = sqlite3.connect(path, isolation_level=None)
    try:
        await db.probe()  # the file made and written once, healthy
        probes = 0
        real_probe = db.probe

        async def counted() -> bool:
            nonlocal probes
            probes += 1
            return await real_probe()

        db.probe = counted  # type: ignore[method-assign]
        gate = RecordsGate(lambda: [db])
        other.execute("BEGIN EXCLUSIVE")  # every write of the store now waits on the lock
        db.health.degrade("disk I/O error (as a fault left it)")
        answers = await asyncio.wait_for(
            asyncio.gather(*(gate.problem() for _ in range(5))), timeout=HELD / 4)
        assert all(a is not None and "disk I/O error" in a for a in answers), answers
        again = await asyncio.wait_for(gate.problem(), timeout=HELD / 4)  # while it still hangs
        assert again is not None and "refuses every guarded call" in again
        assert probes == 1  # the hung one is waited on by all, never started again beside it
        other.execute("COMMIT")
        for _ in range(int(HELD / PROBE_WAIT)):  # bounded by count: the held probe's write now goes through
            if await gate.problem() is None:
                break
        assert db.health.ok and await gate.problem() is None
    finally:
        if other.in_transaction:
            other.execute("ROLLBACK")
        other.close()
        await asyncio.sleep(0)
        await release(db)
