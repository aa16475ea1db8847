"""PostgreSQL stopped under a replica: writes fail closed with a clear cause, health says degraded, and the
replica recovers by itself when the server is back; what was committed before survives the restart."""

from __future__ import annotations

import asyncio
import tempfile
import shutil
from pathlib import Path

from sentinel_mcp.gateway.audit import AuditEntry, AuditLog
from sentinel_mcp.storage import StorageError
from sentinel_mcp.storage.local_server import LocalServer
from tests.conftest import free_port


async def test_server_down_denies_then_recovers_without_losing_commits() -> None:
    root = Path(tempfile.mkdtemp(prefix="sentinel-pg-outage-"))
    server = LocalServer(root / "pg", free_port())
    try:
        await asyncio.to_thread(lambda: server.init().start())
        log = await AuditLog(server.url, chain="r1").open()  # type: ignore[arg-type]
        try:
            before = [await log.write(AuditEntry(session="s", tool="t", decision="allow", outcome="ok"))
                      for _ in range(5)]
            await asyncio.to_thread(server.stop, "immediate")  # a crash, not a clean shutdown
            failures = 0
            for _ in range(3):
                try:
                    await log.write(AuditEntry(session="s", tool="t", decision="allow", outcome="ok"))
                except StorageError as e:
                    failures += 1
                    assert "audit store" in str(e)
            assert failures == 3 and not log.health.ok and log.health.cause
            await asyncio.to_thread(server.start)
            for _ in range(50):  # reconnects on the next write; bounded
                try:
                    after = await log.write(AuditEntry(session="s", tool="t", decision="allow", outcome="ok"))
                    break
                except StorageError:
                    await asyncio.sleep(0.1)
            else:
                raise AssertionError(f"never recovered: {log.health.cause}")
            assert log.health.ok
            got = {r["decision_id"] for r in await log.read(tail=50)}
            assert set(before) | {after} <= got and len(got) == 6  # the refused ones were never recorded
        finally:
            await log.close()
    finally:
        await asyncio.to_thread(server.stop, "immediate")
        shutil.rmtree(root, ignore_errors=True)
