"""A replica slower than ``shared_message_ids.STARTING`` between hearing a message and storing its task
(it looks over the tasks waiting for input first, and waits for one's round) keeps the message: while it is
alive it renews its hearing with its task leases, so a resend through another replica is told the message
is being handled and runs nothing; only a hearing whose replica stopped renewing it is taken over. Before,
any hearing older than ``STARTING`` was taken over: the resend ran the message, and the first replica, still
alive, answered its caller "received already". Real PostgreSQL (two services as two replicas); the table
itself on SQLite too (two readers of one file)."""

from __future__ import annotations

import asyncio

import pytest

from sentinel_mcp.a2a.jsonrpc import INVALID_PARAMS, RpcError
from sentinel_mcp.a2a.protocol import Message, Part, SendMessageRequest
from sentinel_mcp.a2a.shared_message_ids import STARTING, SharedMessageIds
from sentinel_mcp.storage import open_database
from sentinel_mcp.storage.open import release
from tests.cluster.test_a2a_message_id_without_task import AGED
from tests.cluster.test_a2a_message_ids_across_replicas import KEY, echo, echoes, replicas, sent, sql

pytestmark = pytest.mark.timeout(120)
HEARD = "SELECT count(*) FROM a2a_message_ids WHERE caller = 'alice' AND message_id = 'm-1'"
FRESH = (f"SELECT count(*) FROM a2a_message_ids WHERE caller = 'alice' AND message_id = 'm-1' "
         f"AND heard > extract(epoch from clock_timestamp()) - {STARTING}")


def delete(message_id: str) -> SendMessageRequest:
    data = {"type": "tool_call", "tool_call_id": "r", "name": "tools__delete_file", "args": {"path": "x"}}
    return SendMessageRequest(message=Message(message_id=message_id, role="ROLE_USER",
                                              parts=[Part.of_data(data)]))


async def until(url: str, query: str) -> bool:
    for _ in range(400):  # a count of looks, not a time
        if sql(url, query) == [(1,)]:
            return True
        await asyncio.sleep(0.02)
    return False


async def test_a_slow_first_hearing_is_neither_run_twice_nor_lost(pg_url: str) -> None:
    async with replicas(pg_url, "replica-a", "replica-b", renew_every=0.05) as [(a, pa), (b, pb)]:
        parked = await sent(a, delete("park"))  # the guard asks: it waits for input on A
        assert parked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        record = a.store._tasks[parked["id"]]
        # A takes a new message only once it has looked over the tasks waiting for input; this one waited past
        # its time, and a round of it holds its lock (as an answer being taken does): A hears m-1, then waits
        record.status_clock = (record.task.status.timestamp, -1e9)
        a._next_expiry = 0.0
        async with record.lock:
            first = asyncio.create_task(sent(a, echo("m-1")))
            assert await until(pg_url, HEARD)
            sql(pg_url, AGED)  # as if it had waited longer than STARTING
            assert await until(pg_url, FRESH)  # A is alive: its hearing is renewed
            with pytest.raises(RpcError) as resent:
                await sent(b, echo("m-1"))
            assert resent.value.code == INVALID_PARAMS and echoes(pa, pb) == 0
        done = await first
        assert done["status"]["state"] == "TASK_STATE_COMPLETED" and echoes(pa, pb) == 1
        assert (await sent(b, echo("m-1")))["id"] == done["id"] and echoes(pa, pb) == 1


async def test_a_hearing_is_taken_over_only_once_its_holder_stops_renewing(store_location: str) -> None:
    now = [1000.0]
    db = open_database(store_location, "a2a_tasks")
    try:
        holder = await SharedMessageIds.open(db, key=KEY, clock=lambda: now[0])
        other = await SharedMessageIds.open(db, key=KEY, clock=lambda: now[0])
        assert await holder.claim("alice", "m-1", "t-1") is None
        for _ in range(3):  # long past STARTING, renewed all along
            now[0] += STARTING * 0.75
            await holder.renew()
        if store_location.startswith("postgresql"):
            sql(store_location, AGED)
            await holder.renew()
        assert not await other.take_over("alice", "m-1", "t-1", "t-2")
        holder.settle("alice", "m-1", "t-1")  # (as a stopped replica: nothing renews it any more)
        await holder.renew()
        now[0] += STARTING * 2
        if store_location.startswith("postgresql"):
            sql(store_location, AGED)
        assert await other.take_over("alice", "m-1", "t-1", "t-2")
        # a stored hearing is not renewed (nor needs to be): renewing touches starting rows only
        assert await other.claim("alice", "m-2", "t-5") is None
        await db.run(other.stored("alice", "m-2", "t-5"))
        await other.renew()
        assert await other.claim("alice", "m-2", "t-6") == "t-5"
    finally:
        await release(db)
