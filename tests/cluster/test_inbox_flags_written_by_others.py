"""Someone who can write the shared database but does not hold the cluster's seal key turns a real inbox
answer's flags back: ``used = 0`` on an answer a retry (or the held call) already used, ``delivered = 0`` so
the holder hands it over again, or ``expires`` moved past the time the answering replica signed. The person's
one "yes" must still approve one call, never two, and never after its signed expiry. Real PostgreSQL, two
replicas' inboxes in one process (as ``test_rows_written_by_others.py``); one database for the module."""

from __future__ import annotations

import asyncio
import contextlib
from typing import AsyncIterator, Callable

import pytest

from sentinel_mcp.console.cluster_inbox import ClusterInbox
from sentinel_mcp.console.inbox import Inbox, InboxItem
from sentinel_mcp.core.decision import Answer, Question

pytestmark = pytest.mark.timeout(120)
KEY = b"k" * 32
NOW = "EXTRACT(EPOCH FROM clock_timestamp())"
YES = {"confirm": Answer(action="accept", content={"confirm": True})}


@pytest.fixture(scope="module")
def module_url(pg_server) -> str:  # type: ignore[no-untyped-def]
    import psycopg

    with psycopg.connect(pg_server.url, autocommit=True) as conn:
        conn.execute('CREATE DATABASE "inbox_flags"')
    return pg_server.url.rsplit("/", 1)[0] + "/inbox_flags"


def post(inbox: Inbox, name: str, kind: str = "blocked") -> InboxItem:
    question = Question(key="confirm", message=f"Delete {name}?", requested_schema={
        "type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]})
    item = inbox.post(principal="alice", session="s1", client="c", tool="tb__delete_thing",
                      arguments={"name": name}, shown_arguments={"name": name}, version="v1",
                      reason="asks", questions=[question], kind="held")
    item.kind = kind  # type: ignore[assignment]  # blocked: the client was told to call again
    return item


async def take(inbox: Inbox, name: str) -> dict[str, Answer] | None:
    return await inbox.take(principal="alice", session="s1", tool="tb__delete_thing",
                            arguments={"name": name}, version="v1")


async def until(check: Callable[[], bool]) -> None:
    for _ in range(100):
        if check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("not within the bounded wait")


@contextlib.asynccontextmanager
async def two_replicas(module_url: str, ttl: float = 600.0) -> AsyncIterator[
        tuple[Inbox, Inbox, ClusterInbox, ClusterInbox]]:
    a, b = Inbox(), Inbox(ttl=ttl)  # B's console takes the answers (its ttl is the answer's window)
    ma = await ClusterInbox(a, module_url, "replica-a", key=KEY).start()
    mb = await ClusterInbox(b, module_url, "replica-b", key=KEY).start()
    try:
        yield a, b, ma, mb
    finally:
        await ma.stop()
        await mb.stop()


async def answered_on_b(a: Inbox, b: Inbox, name: str, kind: str = "blocked") -> InboxItem:
    item = post(a, name, kind)
    await until(lambda: b.get("alice", item.id) is not None)
    assert await b.give(b.get("alice", item.id), YES)  # type: ignore[arg-type]
    return item


async def test_an_answer_a_retry_used_is_not_used_again_when_used_is_reset(module_url: str) -> None:
    async with two_replicas(module_url) as (a, b, ma, mb):
        for reset in ("used = 0", "used = 0, delivered = 0", "used = 0, live = 1, answered_at = 0"):
            name = f"retry-{len(reset)}"
            item = await answered_on_b(a, b, name)
            assert await take(b, name) is not None  # the retry: the one use of the person's "yes"
            await mb.db.write(f"UPDATE inbox_items SET {reset} WHERE id = ?", (item.id,))
            for inbox in (b, a, b):
                assert await take(inbox, name) is None, reset


async def test_an_answer_a_held_call_used_is_not_used_by_a_retry_when_reset(module_url: str) -> None:
    async with two_replicas(module_url) as (a, b, ma, mb):
        # answered on another replica's console, and on the holder's own
        for name, console in (("held-answered-on-b", b), ("held-answered-on-a", a)):
            item = post(a, name, "held")
            waiting = asyncio.create_task(a.wait(item, 60))
            await until(lambda: console.get("alice", item.id) is not None)
            assert await console.give(console.get("alice", item.id), YES)  # type: ignore[arg-type]
            assert (await asyncio.wait_for(waiting, 30)) is not None  # the held call used it
            # as if nobody used it nor handed it to the holder: the holder's next tick reads it again
            await mb.db.write("UPDATE inbox_items SET used = 0, delivered = 0 WHERE id = ?", (item.id,))
            for _ in range(100):  # until the holder's tick handed it over again, bounded
                if (await mb.db.query("SELECT delivered FROM inbox_items WHERE id = ?", (item.id,)))[0][0]:
                    break
                await asyncio.sleep(0.05)
            assert item.used and a.answered_items("alice") == []  # nothing waits for a retry on the holder
            for inbox in (a, b):
                assert await take(inbox, name) is None


async def test_an_answer_is_never_used_past_its_signed_expiry(module_url: str) -> None:
    async with two_replicas(module_url, ttl=1.0) as (a, b, ma, mb):
        item = await answered_on_b(a, b, "kept-alive")
        signed_until = (await mb.db.query("SELECT expires FROM inbox_items WHERE id = ?", (item.id,)))[0][0]
        await mb.db.write("UPDATE inbox_items SET expires = expires + 3600 WHERE id = ?", (item.id,))
        for _ in range(100):  # until the database's clock is past the answer's signed window, bounded
            if (await mb.db.query(f"SELECT {NOW} > ?", (signed_until,)))[0][0]:
                break
            await asyncio.sleep(0.05)
        for inbox in (a, b):
            assert await take(inbox, "kept-alive") is None


async def test_a_row_put_back_from_a_copy_is_not_used_again_by_the_replica_that_used_it(
    module_url: str,
) -> None:
    async with two_replicas(module_url) as (a, b, ma, mb):
        item = await answered_on_b(a, b, "copied")
        columns = "answers, answer_mac, expires, used, delivered, live, answered_at"
        copy = (await mb.db.query(f"SELECT {columns} FROM inbox_items WHERE id = ?", (item.id,)))[0]
        assert await take(b, "copied") is not None
        await mb.db.write(
            "UPDATE inbox_items SET answers = ?, answer_mac = ?, expires = ?, used = ?, delivered = ?, "
            "live = ?, answered_at = ? WHERE id = ?", (*copy, item.id))
        assert await take(b, "copied") is None
        # open: another replica cannot tell the row put back from the answer before its use (until the
        # signed expiry); see cluster_inbox's docstring


async def test_a_question_the_client_settled_is_not_revived_by_its_flags(module_url: str) -> None:
    """The client answered a blocked call itself: the holder withdraws the question. ``live = 1, used = 0``
    and a later ``expires`` neither show it on a console again nor let an answer to it be claimed or used."""
    async with two_replicas(module_url) as (a, b, ma, mb):
        item = post(a, "settled")
        await until(lambda: b.get("alice", item.id) is not None)
        stale = b.get("alice", item.id)  # the copy B's console showed before the withdrawal
        a.settle_elsewhere(principal="alice", session="s1", tool="tb__delete_thing",
                           arguments={"name": "settled"})
        for _ in range(100):  # until the holder's tick withdrew it, bounded
            if (await mb.db.query("SELECT used FROM inbox_items WHERE id = ?", (item.id,)))[0][0] == 1:
                break
            await asyncio.sleep(0.05)
        await mb.db.write("UPDATE inbox_items SET live = 1, used = 0, expires = expires + 3600 WHERE id = ?",
                          (item.id,))
        later = post(a, "later")  # shown once B's mirror has read past the revived row (one read per tick)
        await until(lambda: b.get("alice", later.id) is not None)
        assert b.get("alice", item.id) is None
        assert not await b.give(stale, YES)  # type: ignore[arg-type]
        for inbox in (a, b):
            assert await take(inbox, "settled") is None
