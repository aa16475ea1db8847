"""A message whose first hearing stored no task (its replica's store failed after the id was written, and
failed again at the release; or the replica stopped in between) is not answered "received already" for a
day: once the hearing is past the time a task takes to start (``shared_message_ids.STARTING``) and its
task is still not stored, the next sending takes the id over and acts, once. An id whose task was stored
is marked so in the task's own transaction, and is never taken over (a task gone since must not let a
replay act again). Real PostgreSQL (two services as two replicas); the table itself on SQLite too."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from sentinel_mcp.a2a.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, RpcError
from sentinel_mcp.a2a.shared_message_ids import STARTING, SharedMessageIds
from sentinel_mcp.storage import open_database
from sentinel_mcp.storage.open import release
from tests.cluster.test_a2a_message_ids_across_replicas import KEY, echo, echoes, replicas, sent, sql

pytestmark = pytest.mark.timeout(120)
AGED = f"UPDATE a2a_message_ids SET heard = heard - {STARTING * 2} WHERE caller = 'alice'"
FAIL = ("CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS "
        "$$ BEGIN RAISE EXCEPTION 'disk full'; END $$; "
        "CREATE TRIGGER no_task BEFORE INSERT ON a2a_task FOR EACH ROW EXECUTE FUNCTION refuse(); "
        "CREATE TRIGGER no_release BEFORE DELETE ON a2a_message_ids FOR EACH ROW EXECUTE FUNCTION refuse()")
MENDED = "DROP TRIGGER no_task ON a2a_task; DROP TRIGGER no_release ON a2a_message_ids"


async def refused(service: Any, mid: str) -> RpcError:
    with pytest.raises(RpcError) as caught:
        await sent(service, echo(mid))
    return caught.value


async def test_a_message_whose_store_failed_twice_may_be_sent_again(pg_url: str) -> None:
    async with replicas(pg_url, "replica-a", "replica-b") as [(a, pa), (b, pb)]:
        await sent(a, echo("warm-up"))  # the tables exist
        sql(pg_url, FAIL)
        assert (await refused(a, "m-1")).code == INTERNAL_ERROR and echoes(pa, pb) == 1
        sql(pg_url, MENDED)
        # still starting, as far as anyone can tell: told so, nothing runs
        assert (await refused(b, "m-1")).code == INVALID_PARAMS and echoes(pa, pb) == 1
        sql(pg_url, AGED)
        again = await sent(b, echo("m-1"))
        assert again["status"]["state"] == "TASK_STATE_COMPLETED" and echoes(pa, pb) == 2
        # taken over and stored: a replay on either replica is answered with that task, and runs nothing
        assert (await sent(a, echo("m-1")))["id"] == again["id"] and echoes(pa, pb) == 2
        sql(pg_url, AGED)
        assert (await sent(a, echo("m-1")))["id"] == again["id"] and echoes(pa, pb) == 2


async def test_a_message_heard_by_a_replica_that_stopped_may_be_sent_again(pg_url: str) -> None:
    async with replicas(pg_url, "replica-a") as [(a, pa)]:
        await sent(a, echo("warm-up"), caller="bob")
        gone = await SharedMessageIds.open(a._journal.db, key=KEY)
        assert await gone.claim("alice", "m-1", "never-stored") is None  # and the replica stopped there
        sql(pg_url, AGED)
        done = await sent(a, echo("m-1"))
        assert done["id"] != "never-stored" and echoes(pa) == 2


async def test_a_stored_task_gone_since_is_not_acted_on_again(pg_url: str) -> None:
    async with replicas(pg_url, "replica-a") as [(a, pa)]:
        first = await sent(a, echo("m-1"))
        sql(pg_url, "DELETE FROM a2a_task WHERE id = %s", (first["id"],))
        sql(pg_url, AGED)
        a.store._tasks.pop(first["id"], None)  # (as a restarted replica would not hold it either)
        assert (await refused(a, "m-1")).code == INVALID_PARAMS and echoes(pa) == 1


async def test_only_a_hearing_past_its_start_and_never_stored_is_taken_over(store_location: str) -> None:
    now = [1000.0]
    db = open_database(store_location, "a2a_tasks")
    try:
        ids = await SharedMessageIds.open(db, key=KEY, clock=lambda: now[0])
        assert await ids.claim("alice", "m-1", "t-1") is None
        assert await ids.claim("alice", "m-1", "t-2") == "t-1"
        assert not await ids.take_over("alice", "m-1", "t-1", "t-2")  # still starting, perhaps
        now[0] += STARTING * 2
        if store_location.startswith("postgresql"):
            sql(store_location, AGED)
        assert not await ids.take_over("alice", "m-1", "t-9", "t-2")  # only the row as it was read
        assert await ids.take_over("alice", "m-1", "t-1", "t-2")
        assert not await ids.take_over("alice", "m-1", "t-1", "t-3")  # once
        assert await ids.claim("alice", "m-1", "t-4") == "t-2"
        # stored in the task's transaction: never taken over, however old
        assert await ids.claim("alice", "m-2", "t-5") is None
        await db.run(ids.stored("alice", "m-2", "t-5"))
        now[0] += STARTING * 2
        if store_location.startswith("postgresql"):
            sql(store_location, AGED)
        assert await ids.claim("alice", "m-2", "t-6") == "t-5"
        assert not await ids.take_over("alice", "m-2", "t-5", "t-6")
    finally:
        await release(db)


async def test_a_hearing_taken_over_while_its_task_was_stored_runs_nothing(pg_url: str) -> None:
    async with replicas(pg_url, "replica-a") as [(a, pa)]:
        await sent(a, echo("warm-up"))
        # as when this replica took longer than STARTING to store its task and another took the hearing over:
        # the row names another task by the time this one's task is stored
        sql(pg_url, "CREATE FUNCTION taken() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "UPDATE a2a_message_ids SET task_id = 'another', mac = 'another''s' WHERE message_id = 'm-1'; "
            "RETURN NEW; END $$; "
            "CREATE TRIGGER taken BEFORE INSERT ON a2a_task FOR EACH ROW EXECUTE FUNCTION taken()")
        assert (await refused(a, "m-1")).code == INVALID_PARAMS and echoes(pa) == 1
        sql(pg_url, "DROP TRIGGER taken ON a2a_task")
        for _ in range(100):  # (a count: the row's delete is queued behind the answer)
            if sql(pg_url, "SELECT count(*) FROM a2a_task") == [(1,)]:
                break
            await asyncio.sleep(0.02)
        assert sql(pg_url, "SELECT count(*) FROM a2a_task") == [(1,)]  # the warm-up's alone
