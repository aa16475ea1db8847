"""A2A tasks behind the storage seam, on both backends; on PostgreSQL shared by replicas and leased
(``a2a/task_lease.py``): read from any replica by their owner only, a dead or restarted replica's running
tasks
ended with the reason (never run again), each by exactly one replica, a late write of the loser changing
nothing."""

from __future__ import annotations

import asyncio
import uuid

import psycopg
import pytest

from sentinel_mcp.a2a.protocol import Task, TaskStatus, now_iso
from sentinel_mcp.a2a.task_journal import LeaseLost, TaskJournal
from sentinel_mcp.a2a.task_store import PendingCall, TaskRecord
from sentinel_mcp.storage.location import is_server_url

RUNNING = "TASK_STATE_WORKING"


def record(owner: str = "alice", state: str = RUNNING, pending: PendingCall | None = None) -> TaskRecord:
    task = Task(
        id=str(uuid.uuid4()),
        context_id=str(uuid.uuid4()),
        status=TaskStatus(state=state, timestamp=now_iso()),
    )  # type: ignore[arg-type]
    return TaskRecord(task=task, owner=owner, session_id=f"{owner}/s", pending=pending)


def settled(rec: TaskRecord, state: str) -> Task:
    return rec.task.model_copy(update={"status": TaskStatus(state=state, timestamp=now_iso())})  # type: ignore


def db_rows(url: str, sql: str, params: tuple = ()) -> list[tuple]:
    with psycopg.connect(url) as conn:
        return conn.execute(sql, params).fetchall()


async def test_tasks_are_stored_and_come_back_on_either_backend(store_location: str) -> None:
    journal = TaskJournal(store_location, "replica-a")
    assert await journal.open() == []
    done, waiting = (
        record(),
        record(state="TASK_STATE_INPUT_REQUIRED", pending=PendingCall("t", {"x": 1}, ["k"], "tool_call")),
    )
    await journal.commit(done, settled(done, "TASK_STATE_COMPLETED"))
    await journal.commit(waiting)
    await journal.close()
    again = TaskJournal(store_location, "replica-a")  # the same replica restarted (or the same gateway)
    back = {r.task.id: r for r in await again.open()}
    assert back[waiting.task.id].pending == waiting.pending  # still resumable here
    if is_server_url(store_location):  # shared: finished tasks are read through, not loaded
        assert done.task.id not in back
        got = await again.read(done.task.id, "alice")
        assert got is not None and got.task.status.state == "TASK_STATE_COMPLETED"
    else:
        assert back[done.task.id].task.status.state == "TASK_STATE_COMPLETED"
    await again.close()


async def test_any_replica_reads_a_task_for_its_owner_only(pg_url: str) -> None:
    a, b = TaskJournal(pg_url, "replica-a"), TaskJournal(pg_url, "replica-b")
    await a.open()
    await b.open()
    mine = record("alice")
    await a.commit(mine)
    got = await b.read(mine.task.id, "alice")
    assert got is not None and got.replica == "replica-a" and got.task.id == mine.task.id
    for other in ("bob", "ALICE", "alice ", "", "%", "alice' OR '1'='1"):  # another caller: no such task
        assert await b.read(mine.task.id, other) is None
        assert await b.owned(other, 100) == []
    assert [r.task.id for r in await b.owned("alice", 100)] == [mine.task.id]
    await a.close()
    await b.close()


async def test_a_lapsed_task_is_ended_with_the_reason_once_and_the_loser_cannot_overwrite(
    pg_url: str,
) -> None:
    a = TaskJournal(pg_url, "replica-a", lease_seconds=600)
    b = TaskJournal(pg_url, "replica-b")
    await a.open()
    await b.open()
    rec = record()
    await a.commit(rec)
    assert await b.end_lapsed() == []  # a lease being renewed is never taken
    assert rec.task.id in await a.renew([rec.task.id])
    db_rows(pg_url, "UPDATE a2a_task SET lease_until = 0 WHERE id = %s RETURNING id", (rec.task.id,))
    ended = await asyncio.gather(b.end_lapsed(), b.end_lapsed(), a.end_lapsed())
    assert sorted(sum(ended, [])) == [rec.task.id]  # exactly one sweep ended it
    assert await a.renew([rec.task.id]) == set()  # a's renewal no longer finds it: its runner must stop
    with pytest.raises(LeaseLost):  # a's late result changes nothing
        await a.commit(rec, settled(rec, "TASK_STATE_COMPLETED"))
    a.save(rec)  # a queued passing state neither
    await a.close()
    got = await b.read(rec.task.id, "alice")
    assert got is not None and got.task.status.state == "TASK_STATE_FAILED"
    text = got.task.status.message.parts[0].text  # type: ignore[union-attr]
    assert text.startswith("interrupted: replica replica-a stopped") and "not run again" in text
    assert got.task.history and got.task.history[-1].parts[0].text == text
    await b.close()


async def test_a_task_that_settled_since_its_id_was_read_is_still_its_replicas(pg_url: str) -> None:
    """The lease keeper reads which tasks run, then renews them: one may settle in between (wait for input,
    finish, or start its next round). Still this process's own: taking it for lost stopped a next round
    just started (the answered task came back CANCELED). Only a running row's lease is extended; a task
    another replica took over or ended is lost."""
    a = TaskJournal(pg_url, "replica-a", lease_seconds=600)
    b = TaskJournal(pg_url, "replica-b")
    await a.open()
    await b.open()
    asking = record()
    done = record()
    for rec in (asking, done):
        await a.commit(rec)
    ids = [asking.task.id, done.task.id]  # read while both ran
    asking.pending = PendingCall("t", {}, ["k"], "tool_call")
    await a.commit(asking, settled(asking, "TASK_STATE_INPUT_REQUIRED"))
    await a.commit(done, settled(done, "TASK_STATE_COMPLETED"))
    assert await a.renew(ids) == set(ids)
    until = "SELECT lease_until FROM a2a_task WHERE id = %s"
    assert db_rows(pg_url, until, (done.task.id,)) == [(None,)]  # a settled row gains no lease
    # the next round starts here: renewed as before
    asking.pending = None
    await a.commit(asking, settled(asking, RUNNING))
    assert await a.renew([asking.task.id]) == {asking.task.id}
    assert db_rows(pg_url, until, (asking.task.id,))[0][0] is not None
    # waiting again, then taken over by b: a's renewal no longer finds it
    asking.pending = PendingCall("t", {}, ["k"], "tool_call")
    await a.commit(asking, settled(asking, "TASK_STATE_INPUT_REQUIRED"))
    seen = await b.read(asking.task.id, "alice")
    assert seen is not None and await b.claim(seen)
    assert await a.renew(ids) == {done.task.id}
    await a.close()
    await b.close()


async def test_a_restarted_replica_ends_its_own_old_tasks_at_once(pg_url: str) -> None:
    first = TaskJournal(pg_url, "replica-a", lease_seconds=600)  # leases far from lapsing
    await first.open()
    running, waiting, other = (
        record(),
        record(state="TASK_STATE_INPUT_REQUIRED", pending=PendingCall("t", {}, ["k"], "tool_call")),
        record(),
    )
    await first.commit(running)
    await first.commit(waiting)
    b = TaskJournal(pg_url, "replica-b", lease_seconds=600)
    await b.open()
    await b.commit(other)
    await first.close()  # the process dies (its rows stay as they were)
    second = TaskJournal(pg_url, "replica-a")
    back = await second.open()
    assert [r.task.id for r in back] == [waiting.task.id]  # taken back, still resumable
    got = await second.read(running.task.id, "alice")
    assert got is not None and got.task.status.state == "TASK_STATE_FAILED"
    assert "replica replica-a restarted" in got.task.status.message.parts[0].text  # type: ignore[union-attr]
    still = await second.read(other.task.id, "alice")  # another replica's live task is not touched
    assert still is not None and still.task.status.state == RUNNING
    # the restarted process holds its waiting task now; the old process could not write it any more
    await second.commit(waiting, settled(waiting, "TASK_STATE_CANCELED"))
    assert await first_cannot_write(pg_url, waiting.task.id, first.holder)
    await second.close()
    await b.close()


async def first_cannot_write(url: str, task_id: str, old_holder: str) -> bool:
    return db_rows(url, "SELECT lease_holder FROM a2a_task WHERE id = %s", (task_id,))[0][0] != old_holder


@pytest.mark.parametrize("name", ["'; DROP TABLE a2a_task; --", "replica\nb", "r" * 64, "a%s?b"])
async def test_the_reason_names_the_replica_as_data(pg_url: str, name: str) -> None:
    a = TaskJournal(pg_url, name, lease_seconds=-1)  # its lease lapsed at once
    await a.open()
    rec = record()
    await a.commit(rec)
    assert await a.end_lapsed() == [rec.task.id]
    got = await a.read(rec.task.id, "alice")
    assert got is not None
    assert got.task.status.message.parts[0].text.startswith(f"interrupted: replica {name} stopped")  # type: ignore
    await a.close()


async def test_a_task_waiting_for_input_is_taken_over_by_exactly_one_replica(pg_url: str) -> None:
    from sentinel_mcp.a2a.task_store import TaskStore
    from sentinel_mcp.core.errors import SentinelError

    a, b, c = (TaskJournal(pg_url, f"replica-{n}") for n in "abc")
    for j in (a, b, c):
        await j.open()
    waiting = record(state="TASK_STATE_INPUT_REQUIRED", pending=PendingCall("t", {}, ["k"], "tool_call"))
    await a.commit(waiting)
    # b and c read the task a holds and claim it at once: one statement each, so exactly one gets it
    seen_b, seen_c = await b.read(waiting.task.id, "alice"), await c.read(waiting.task.id, "alice")
    assert seen_b is not None and seen_c is not None
    claimed = await asyncio.gather(b.claim(seen_b), c.claim(seen_c))
    assert sorted(claimed) == [False, True]
    winner, loser = (b, c) if claimed[0] else (c, b)
    with pytest.raises(LeaseLost):  # a can no longer run it (its continue commits WORKING first)
        await a.commit(waiting, settled(waiting, RUNNING))
    # the winner continues it (WORKING first): from then on no replica can take it over; the loser is told who
    # holds it
    await winner.commit(waiting, settled(waiting, RUNNING))
    with pytest.raises(SentinelError, match="held by replica"):
        await TaskStore(journal=loser).held(waiting.task.id, "alice")  # type: ignore[arg-type]
    with pytest.raises(Exception, match="not found"):  # another principal: no such task, and no take-over
        await TaskStore(journal=b).held(waiting.task.id, "bob")  # type: ignore[arg-type]
    for j in (a, b, c):
        await j.close()


async def test_a_task_waiting_for_input_is_never_run_by_two_replicas(pg_url: str) -> None:
    """Through the store, two replicas asked at once may both take a waiting task over in turn (the second
    read can see the first's claim and take it from a replica where nothing runs for it): of their two
    continues exactly one commits, so it runs once."""
    from sentinel_mcp.a2a.task_store import TaskStore

    a, b, c = (TaskJournal(pg_url, f"replica-{n}") for n in "abc")
    for j in (a, b, c):
        await j.open()
    for _ in range(3):
        waiting = record(state="TASK_STATE_INPUT_REQUIRED", pending=PendingCall("t", {}, ["k"], "tool_call"))
        await a.commit(waiting)
        got = await asyncio.gather(
            TaskStore(journal=b).held(waiting.task.id, "alice"),  # type: ignore[arg-type]
            TaskStore(journal=c).held(waiting.task.id, "alice"),  # type: ignore[arg-type]
            return_exceptions=True,
        )
        takers = [j for j, g in zip((b, c), got) if isinstance(g, TaskRecord)]
        assert takers and all(g.pending == waiting.pending for g in got if isinstance(g, TaskRecord))
        runs = await asyncio.gather(
            *(j.commit(waiting, settled(waiting, RUNNING)) for j in (a, *takers)), return_exceptions=True
        )
        assert [r for r in runs if not isinstance(r, LeaseLost)] == [[]]  # one commit (no statements with it)
    for j in (a, b, c):
        await j.close()


async def test_a_stale_read_never_takes_over_a_later_round_of_the_task(pg_url: str) -> None:
    """B takes the waiting task over; C reads it (holder B, waiting); before C claims it, B runs its call and
    the task waits for input again (holder B, a new pending call). C's claim on its old snapshot must fail: it
    would run the call B already ran (the holder and the state alone look as they did when C read them)."""
    a, b, c = (TaskJournal(pg_url, f"replica-{n}") for n in "abc")
    for j in (a, b, c):
        await j.open()
    try:
        first = PendingCall("t", {"n": 1}, ["k"], "tool_call")
        waiting = record(state="TASK_STATE_INPUT_REQUIRED", pending=first)
        await a.commit(waiting)
        seen = await b.read(waiting.task.id, "alice")
        assert seen is not None and await b.claim(seen)
        stale = await c.read(waiting.task.id, "alice")
        assert stale is not None and stale.pending == waiting.pending
        seen = await b.read(waiting.task.id, "alice")  # as B holds it (the service keeps its own copy)
        assert seen is not None
        await b.commit(seen, settled(seen, RUNNING))  # B continues: WORKING first, then its call runs
        seen.pending = PendingCall("t", {"n": 2}, ["k2"], "tool_call")  # ... and asks again
        await b.commit(seen, settled(seen, "TASK_STATE_INPUT_REQUIRED"))
        assert not await c.claim(stale)  # the first round's snapshot takes nothing over
        fresh = await c.read(waiting.task.id, "alice")
        assert fresh is not None and fresh.pending == seen.pending and await c.claim(fresh)
        with pytest.raises(LeaseLost):  # and B, which held the second round, can no longer run it
            await b.commit(seen, settled(seen, RUNNING))
    finally:
        for j in (a, b, c):
            await j.close()
