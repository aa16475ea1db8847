"""An agent run's trace on a server store is shown to the principal its run row names, on every replica. Its
rows are signed by the replica that wrote them (``agent/trace_rows.py``): the run over its id, principal and
conversation; each step over its run, number and record; each reflection over its run and all it says. Before,
anyone who could write the database without the seal key could hand bob's run (what his agent read: his
messages, his screen) to alice in SQL, move or copy a step or a reflection of his into her run, or plant a
run under her name. Such rows are now nobody's: never listed, opened or shown."""

from __future__ import annotations

import psycopg
import pytest

from sentinel_mcp.agent.trace_store import TraceStore

KEY = b"t" * 32
SECRET = "bob's sms: the door code is 4711"


def sql(url: str, text: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(text)


async def _two_runs(url: str) -> None:
    async with TraceStore(url, key=KEY) as traces:
        await traces.start_run("run-a", "alice", "alice/s", "check the weather", "m")
        await traces.record_step("run-a", 1, {"summary": "weather app"})
        await traces.record_reflection("run-a", 1, "reflection", ["slow"], "wait for it")
        await traces.start_run("run-b", "bob", "bob/s", "read my sms", "m")
        await traces.record_step("run-b", 1, {"summary": SECRET})
        await traces.record_step("run-b", 2, {"summary": "back home"})
        await traces.record_reflection("run-b", 1, "reflection", ["repeat"], SECRET)
        await traces.finish_run("run-b", "done", "", SECRET, 2, 10)


async def test_signed_runs_are_shown_to_their_principal_on_another_replica(pg_url: str) -> None:
    await _two_runs(pg_url)
    async with TraceStore(pg_url, key=KEY) as other:
        assert [r["run_id"] for r in await other.runs("bob")] == ["run-b"]
        seen = await other.run("bob", "run-b")
        assert seen is not None and seen["answer"] == SECRET
        assert [s["summary"] for s in seen["trace"]] == [SECRET, "back home"]
        assert [r["text"] for r in seen["reflections"]] == [SECRET]
        assert [r["run_id"] for r in await other.runs("alice")] == ["run-a"]
    async with TraceStore(pg_url, key=b"x" * 32) as stranger:  # another key: nothing
        assert await stranger.runs("bob") == [] and await stranger.run("bob", "run-b") is None


ATTACKS = {
    "run handed to alice": "UPDATE agent_runs SET principal = 'alice' WHERE run_id = 'run-b'",
    "run handed over with its conversation": "UPDATE agent_runs SET principal = 'alice', session = 'alice/s' "
                                             "WHERE run_id = 'run-b'",
    "run planted": "INSERT INTO agent_runs (run_id, principal, session, goal, status, answer, started) "
                   "VALUES ('run-p', 'alice', 'alice/s', 'x', 'done', '" + SECRET.replace("'", "''")
                   + "', 0)",
    "step moved": "UPDATE agent_steps SET run_id = 'run-a', n = 5 WHERE run_id = 'run-b' AND n = 1",
    "step record copied": "UPDATE agent_steps SET record = (SELECT record FROM agent_steps WHERE "
                          "run_id = 'run-b' AND n = 1) WHERE run_id = 'run-a'",
    "step with its signature copied": "INSERT INTO agent_steps SELECT 'run-a', 7, at, record, mac FROM "
                                      "agent_steps WHERE run_id = 'run-b' AND n = 1",
    "reflection moved": "UPDATE agent_reflections SET run_id = 'run-a' WHERE run_id = 'run-b'",
    "reflection text copied": "UPDATE agent_reflections SET text = (SELECT text FROM agent_reflections "
                              "WHERE run_id = 'run-b') WHERE run_id = 'run-a'",
}


@pytest.mark.parametrize("attack", list(ATTACKS))
async def test_bobs_trace_never_reaches_alice_through_rows_written_in_sql(pg_url: str, attack: str) -> None:
    await _two_runs(pg_url)
    sql(pg_url, ATTACKS[attack])
    async with TraceStore(pg_url, key=KEY) as replica:
        listed = await replica.runs("alice", 20)
        opened = [await replica.run("alice", rid) for rid in ("run-a", "run-b", "run-p")]
        shown = repr(listed) + repr(opened)
        assert SECRET not in shown, (attack, shown)
        assert all(r["run_id"] == "run-a" for r in listed), listed
        assert opened[1] is None and opened[2] is None
        bob = await replica.run("bob", "run-b")
        if attack.startswith("run handed"):
            assert bob is None  # the row no longer says what was signed: nobody's
        else:
            assert bob is not None
