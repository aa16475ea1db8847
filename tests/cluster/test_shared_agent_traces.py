"""The agent's run traces behind the storage seam on both backends (SQLite file, real PostgreSQL); on
PostgreSQL shared by replicas, so any replica's console shows a run whichever replica ran it, to its principal
only: the newest runs kept with their steps and reflections, a step rewritten in place, reflections in the
order they were written."""

from __future__ import annotations

import pytest

from sentinel_mcp.agent.trace_store import TraceStore, TraceStoreError
from sentinel_mcp.storage.location import is_server_url


async def test_runs_steps_and_reflections_on_either_backend(store_location: str) -> None:
    async with TraceStore(store_location, keep=2) as traces:
        for i in range(3):
            await traces.start_run(f"r{i}", "alice", "s", f"goal {i}", "m")
            await traces.record_step(f"r{i}", 1, {"summary": "before"})
            await traces.record_step(f"r{i}", 1, {"summary": f"step {i}"})  # the outcome, in place
            for text in ("first", "second", "third"):  # same step, same millisecond: order kept
                await traces.record_reflection(f"r{i}", 1, "retry", ["slow"], f"{text} {i}")
            await traces.finish_run(f"r{i}", "done", "", "ok", 1, 10)
        await traces.start_run("r3", "alice", "s", "goal 3", "m")  # trims to the newest two
        assert [r["run_id"] for r in await traces.runs("alice", 10)] == ["r3", "r2"]
        run = await traces.run("alice", "r2")
        assert run is not None and run["status"] == "done" and run["tokens"] == 10
        assert [s["summary"] for s in run["trace"]] == ["step 2"]
        assert [r["text"] for r in run["reflections"]] == ["first 2", "second 2", "third 2"]
        for table in ("agent_steps", "agent_reflections"):
            rows = await traces.db.query(f"SELECT DISTINCT run_id FROM {table} ORDER BY run_id")
            assert rows == [("r2",)], table
        assert await traces.run("bob", "r2") is None and await traces.runs("bob") == []
        with pytest.raises(TraceStoreError):  # a run id used twice is refused (the run stops)
            await traces.start_run("r3", "alice", "s", "again", "m")


async def test_a_run_on_one_replica_is_read_on_another(pg_url: str) -> None:
    assert is_server_url(pg_url)
    async with TraceStore(pg_url) as on_a, TraceStore(pg_url) as on_b:
        await on_a.start_run("run-a", "alice", "alice/conv-1", "read my sms", "m")
        await on_a.record_step("run-a", 1, {"summary": "home screen"})
        await on_a.record_reflection("run-a", 1, "reflection", ["repeat"], "try the search")
        seen = await on_b.run("alice", "run-a")
        assert seen is not None and seen["goal"] == "read my sms"
        assert seen["trace"][0]["summary"] == "home screen"
        assert seen["reflections"][0]["text"] == "try the search"
        assert [r["run_id"] for r in await on_b.runs("alice")] == ["run-a"]
        assert await on_b.run("bob", "run-a") is None and await on_b.runs("bob") == []
