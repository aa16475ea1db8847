"""A message sent again (same messageId, same caller) acts once across replicas: the ids heard live in the
shared store (``a2a/shared_message_ids.py``), so a replay sent to another replica than the first (or to both
at once) is answered with the first's task and runs nothing. A row not signed by a replica of the cluster is
refused (nothing runs), and a store that cannot say denies. The rows are bounded per caller, in all, and by
age. Real PostgreSQL, two services opened on it as two replicas, each with its own gateway port."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, AsyncIterator

import psycopg
import pytest

from sentinel_mcp.a2a.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, RpcError
from sentinel_mcp.a2a.protocol import Message, Part, SendMessageRequest
from sentinel_mcp.a2a.service import A2AService
from sentinel_mcp.a2a.settings import A2ASettings
from sentinel_mcp.a2a.shared_message_ids import SharedMessageIds
from sentinel_mcp.storage import open_database
from sentinel_mcp.storage.open import release
from tests.a2a.a2a_rig import ClientPort, open_port

pytestmark = pytest.mark.timeout(120)
KEY = b"m" * 32


def echo(message_id: str, text: str = "book it") -> SendMessageRequest:
    data = {"type": "tool_call", "tool_call_id": "r", "name": "tools__echo", "args": {"text": text}}
    message = Message(message_id=message_id, role="ROLE_USER", parts=[Part.of_data(data)])
    return SendMessageRequest(message=message)


def echoes(*ports: ClientPort) -> int:
    return sum(1 for p in ports for c in p.calls if c.name == "tools__echo")


def sql(url: str, text: str, params: tuple = ()) -> list[tuple]:
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(text, params)
        return cur.fetchall() if cur.description else []


@contextlib.asynccontextmanager
async def replicas(url: str, *names: str,
                   renew_every: float | None = None) -> AsyncIterator[list[tuple[A2AService, ClientPort]]]:
    async with contextlib.AsyncExitStack() as stack:
        out = []
        for name in names:
            port = await stack.enter_async_context(open_port(with_sensors=False))
            service = A2AService(port, A2ASettings())  # type: ignore[arg-type]
            more = {} if renew_every is None else {"renew_every": renew_every}
            await service.open(url, replica=name, task_key=KEY, label_key=KEY, **more)
            stack.push_async_callback(service.close)
            out.append((service, port))
        yield out


async def sent(service: A2AService, req: SendMessageRequest, caller: str = "alice") -> dict[str, Any]:
    return (await service.send_message(req, caller))["task"]


async def test_a_replay_sent_to_another_replica_is_answered_with_the_first_task(pg_url: str) -> None:
    async with replicas(pg_url, "replica-a", "replica-b") as [(a, pa), (b, pb)]:
        first = await sent(a, echo("m-1"))
        assert first["status"]["state"] == "TASK_STATE_COMPLETED" and echoes(pa, pb) == 1
        again = await sent(b, echo("m-1"))
        assert again["id"] == first["id"] and echoes(pa, pb) == 1
        # another caller's message of that id is its own; another id is another message
        bobs = await sent(b, echo("m-1"), caller="bob")
        assert bobs["id"] != first["id"] and echoes(pa, pb) == 2
        other = await sent(b, echo("m-2"))
        assert other["id"] != first["id"] and echoes(pa, pb) == 3


async def test_one_message_sent_to_both_replicas_at_once_acts_once(pg_url: str) -> None:
    async with replicas(pg_url, "replica-a", "replica-b") as [(a, pa), (b, pb)]:
        for round_ in range(5):  # bounded: each round one message id, raced through both replicas
            mid = f"race-{round_}"
            got = await asyncio.gather(sent(a, echo(mid)), sent(b, echo(mid)), return_exceptions=True)
            tasks = {t["id"] for t in got if isinstance(t, dict)}
            refused = [e for e in got if isinstance(e, BaseException)]
            assert len(tasks) == 1, got  # one task, answered to both or to one (the other told it is handled)
            assert all(isinstance(e, RpcError) and e.code == INVALID_PARAMS for e in refused), refused
            assert echoes(pa, pb) == round_ + 1


async def test_a_row_no_replica_signed_is_refused_and_nothing_runs(pg_url: str) -> None:
    async with replicas(pg_url, "replica-a", "replica-b") as [(a, pa), (b, pb)]:
        mine = await sent(a, echo("m-1"))
        theirs = await sent(a, echo("m-9"), caller="bob")
        # pointed in SQL at another task (bob's), or made up for an id not heard yet: neither is followed
        sql(pg_url, "UPDATE a2a_message_ids SET task_id = %s WHERE caller = 'alice' AND message_id = 'm-1'",
            (theirs["id"],))
        sql(pg_url, "INSERT INTO a2a_message_ids (caller, message_id, task_id, heard, mac) "
            "VALUES ('alice', 'm-2', 'made-up', 1e12, 'x')")
        calls = echoes(pa, pb)
        for mid in ("m-1", "m-2"):
            with pytest.raises(RpcError) as refused:
                await sent(b, echo(mid))
            assert refused.value.code == INTERNAL_ERROR and "nothing was started" in refused.value.message
        assert echoes(pa, pb) == calls and mine["id"] != theirs["id"]


async def test_a_store_that_cannot_say_denies(pg_url: str) -> None:
    async with replicas(pg_url, "replica-a") as [(a, pa)]:
        await sent(a, echo("m-1"))
        sql(pg_url, "REVOKE ALL ON a2a_message_ids FROM PUBLIC")
        sql(pg_url, "ALTER TABLE a2a_message_ids RENAME TO a2a_message_ids_gone")
        calls = echoes(pa)
        for mid in ("m-1", "m-2"):  # a replay and a new message: neither can be told apart, both refused
            with pytest.raises(RpcError) as refused:
                await sent(a, echo(mid))
            assert refused.value.code == INTERNAL_ERROR and "nothing was started" in refused.value.message
        assert echoes(pa) == calls


async def test_rows_are_bounded_per_caller_in_all_and_by_age(pg_url: str) -> None:
    db = open_database(pg_url, "a2a_tasks")
    try:
        ids = await SharedMessageIds.open(db, key=KEY, per_caller=3, total=5, max_age=3600.0, sweep_every=1)
        for i in range(5):
            assert await ids.claim("a", f"m{i}", f"t{i}") is None
        assert await ids.claim("a", "m4", "x") == "t4" and await ids.claim("a", "m2", "x") == "t2"
        assert await ids.claim("a", "m1", "t1b") is None  # the oldest beyond 3 forgotten: heard anew
        assert sql(pg_url, "SELECT count(*) FROM a2a_message_ids WHERE caller = 'a'") == [(3,)]
        for who in ("b", "c", "d"):  # other callers: at most 5 rows in all, the oldest heard go first
            assert await ids.claim(who, "x", f"t-{who}") is None
        assert sql(pg_url, "SELECT count(*) FROM a2a_message_ids")[0][0] <= 5
        assert await ids.claim("d", "x", "y") == "t-d"
        # aged past max_age (the heard time is the database's; set back here as an old row would be)
        sql(pg_url, "UPDATE a2a_message_ids SET heard = heard - 7200 WHERE caller = 'd'")
        assert await ids.claim("d", "x", "t-d2") is None
        # a caller's own id that no longer runs anything: released, a resend may try again
        await ids.release("d", "x", "t-d2")
        assert await ids.claim("d", "x", "t-d3") is None
    finally:
        await release(db)
