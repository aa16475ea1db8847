"""A build's caps and its files' digests are kept by both store backends (red team 'device' 6.1 and 6.3):
the row says the caps that bound the build, each accepted step the SHA-256 of the file it wrote."""

from __future__ import annotations

from pathlib import Path

import pytest

from sentinel_mcp.swarm.state import SwarmStore

pytestmark = pytest.mark.timeout(120)
TASK = "t20260101-000000-0000c1"
CAPS = {"limits": {"max_model_calls": 5}, "breakers": {"consecutive_failures": 2}, "max_builds_per_hour": 9}


async def test_caps_and_digests_are_kept_by_either_store(store_location: str, tmp_path: Path) -> None:
    store = await SwarmStore(store_location).open()
    try:
        lease = ("r1", "r1-holder", 30.0) if store.shared else None
        assert await store.create_task(TASK, {"app_name": "N"}, tmp_path / TASK, caps=CAPS, lease=lease)
        await store.record_step(TASK, 1, 1, "app/A.kt", "REJECTED", [], [], 3)
        await store.record_step(TASK, 1, 2, "app/A.kt", "ACCEPTED", [], [], 3, "ab" * 32)
        task = await store.get_task(TASK)
        assert task is not None and task["caps"] == CAPS
        assert await store.written_sha256(TASK, "app/A.kt") == "ab" * 32
        assert await store.written_sha256(TASK, "app/B.kt") is None  # the build wrote no such file
        assert await store.written_sha256("t20260101-000000-0000c2", "app/A.kt") is None  # nor another build
    finally:
        await store.close()
