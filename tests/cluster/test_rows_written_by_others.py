"""Someone who can write the shared database (a replica's credentials, a DBA, an injected statement elsewhere)
but does not hold the cluster's seal key writes rows: none of them may count as the user's "yes".

A confirmation row grants a destructive call on every replica. Its binding (principal, conversation, tool,
argument digest, policy version) is signed with a key derived from ``sentinel.cluster.seal_key``, so a row
made up in SQL, or a real one moved to another conversation, principal, tool or version, grants nothing (the
call is asked again). The console inbox's rows (a question one replica holds, the answer another replica's
console gave) are signed the same way: a question made up in SQL is shown to nobody, an answer written in SQL
neither lets a held call go nor is used by a retry. Real PostgreSQL; one database for the module."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import AsyncIterator

import pytest

from sentinel_mcp.console.cluster_inbox import ClusterInbox
from sentinel_mcp.console.inbox import Inbox, InboxItem
from sentinel_mcp.core.decision import Answer, Question, ToolCall
from sentinel_mcp.policy.confirmation_book import SharedConfirmationBook, signed_binding
from sentinel_mcp.storage import open_database
from sentinel_mcp.storage.open import release

VERSION = "default:fail-safe"
KEY = b"k" * 32


def pay(session: str = "alice/label-x-1", principal: str | None = "alice", **arguments: object) -> ToolCall:
    return ToolCall(name="srv__pay", server="srv", tool="pay", arguments=arguments or {"n": 1},
                    session_id=session, principal=principal)


@pytest.fixture(scope="module")
def module_url(pg_server) -> str:  # type: ignore[no-untyped-def]
    import psycopg

    with psycopg.connect(pg_server.url, autocommit=True) as conn:
        conn.execute('CREATE DATABASE "forged_rows"')
    return pg_server.url.rsplit("/", 1)[0] + "/forged_rows"


@pytest.fixture
async def db(module_url: str) -> AsyncIterator[object]:
    d = open_database(module_url, "confirmations")
    await SharedConfirmationBook.open(d, 60, key=KEY)
    await d.write("DELETE FROM confirmations")
    try:
        yield d
    finally:
        await release(d)


async def test_a_confirmation_made_up_in_sql_grants_nothing(db) -> None:  # type: ignore[no-untyped-def]
    book = SharedConfirmationBook(db, 60, key=KEY)
    c = pay()
    # the expiry a replica would write now (signed with the row): only the binding differs below
    now = "CAST(EXTRACT(EPOCH FROM clock_timestamp()) AS DOUBLE PRECISION)"
    exp = (await db.query(f"SELECT {now} + 60"))[0][0]
    forged = [
        ("", ""),  # no signature at all (as a row written before signing, or by hand)
        ("00" * 32, "alice"),
        ("é" * 64, "alice"),  # not ASCII: compared as bytes, never an error
        # another key
        (signed_binding(b"x" * 32, "alice", c.session_id, c.identity, c.digest, VERSION, exp), "alice"),
        (signed_binding(KEY, "alice", c.session_id, c.identity, c.digest, VERSION, exp).upper(), "alice"),
        (signed_binding(KEY, "bob", c.session_id, c.identity, c.digest, VERSION, exp), "alice"),
        (signed_binding(KEY, "alice", c.session_id, c.identity, c.digest, VERSION, exp), "bob"),
    ]
    for mac, principal in forged:
        await db.write(
            "INSERT INTO confirmations (session, tool, digest, version, principal, expires_at, mac) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (c.session_id, c.identity, c.digest, VERSION, principal, exp, mac),
        )
        assert not await book.held(c, VERSION), (mac, principal)
        assert not await book.take(c, VERSION), (mac, principal)
        await db.write("DELETE FROM confirmations")


async def test_a_real_confirmation_moved_to_another_call_grants_nothing(db) -> None:  # type: ignore[no-untyped-def]
    a, b = SharedConfirmationBook(db, 60, key=KEY), SharedConfirmationBook(db, 60, key=KEY)  # two replicas
    await a.grant(pay(), VERSION)
    assert await b.held(pay(), VERSION)  # the same key on every replica: given on A, good on B
    other_call = pay(n=2)
    moves = [
        ("session", "'bob/label-x-1'", pay("bob/label-x-1", "bob")),
        ("principal", "'bob'", pay(principal="bob")),
        ("digest", f"'{other_call.digest}'", other_call),
        ("version", "'default:deny'", None),
        ("tool", "'srv__drop'", ToolCall(name="srv__drop", server="srv", tool="drop", arguments={"n": 1},
                                          session_id="alice/label-x-1", principal="alice")),
        ("expires_at", "expires_at + 3600", pay()),  # the same "yes" kept alive past its time
    ]
    for column, value, call in moves:
        await db.write("DELETE FROM confirmations")
        await a.grant(pay(), VERSION)
        await db.write(f"UPDATE confirmations SET {column} = {value}")
        target, version = (call, VERSION) if call is not None else (pay(), "default:deny")
        assert not await b.take(target, version), column
    await db.write("DELETE FROM confirmations")
    await a.grant(pay(), VERSION)
    assert not await SharedConfirmationBook(db, 60, key=b"z" * 32).take(pay(), VERSION)  # another seal key
    await a.grant(pay(), VERSION)
    assert not await b.take(pay(principal="bob"), VERSION)  # another principal's call in alice's session
    assert await b.take(pay(), VERSION) and not await a.take(pay(), VERSION)  # the real one: once


# ------------------------------------------------------------------ the console inbox across replicas

def question(name: str) -> Question:
    return Question(key="confirm", message=f"Delete {name}?", requested_schema={
        "type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]})


def post(inbox: Inbox, name: str, principal: str = "alice") -> InboxItem:
    return inbox.post(principal=principal, session="s1", client="c", tool="tb__delete_thing",
                      arguments={"name": name}, shown_arguments={"name": name}, version="v1",
                      reason="asks", questions=[question(name)], kind="held")


async def until(check) -> None:  # type: ignore[no-untyped-def]
    for _ in range(100):
        if check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("not within the bounded wait")


YES_TEXT = json.dumps({"confirm": {"action": "accept", "content": {"confirm": True}}})


@contextlib.asynccontextmanager
async def two_replicas(module_url: str) -> AsyncIterator[tuple[Inbox, Inbox, ClusterInbox, ClusterInbox]]:
    a, b = Inbox(), Inbox()
    ma = await ClusterInbox(a, module_url, "replica-a", key=KEY).start()
    mb = await ClusterInbox(b, module_url, "replica-b", key=KEY).start()
    try:
        yield a, b, ma, mb
    finally:
        await ma.stop()
        await mb.stop()


async def test_an_answer_written_in_sql_never_lets_a_held_call_go(module_url: str) -> None:
    async with two_replicas(module_url) as (a, b, ma, mb):
        item = post(a, "forged-answer")
        waiting = asyncio.create_task(a.wait(item, 60))
        await until(lambda: b.get("alice", item.id) is not None)  # shared, signed by A: B shows it
        delivered = asyncio.Event()
        deliver = ma._deliver  # noqa: SLF001 - told when A's mirror hands an answer to its held call

        def told(item_id: str, text: str, *rest: object) -> None:
            deliver(item_id, text, *rest)  # type: ignore[arg-type]
            delivered.set()

        ma._deliver = told  # type: ignore[method-assign]  # noqa: SLF001
        # as another replica's console would write it, but without the key: answers, not delivered yet
        await mb.db.write("UPDATE inbox_items SET answers = ?, delivered = 0, answered_at = 1 WHERE id = ?",
                          (YES_TEXT, item.id))
        await asyncio.wait_for(delivered.wait(), 30)
        await asyncio.sleep(0)
        assert not waiting.done() and item.answers is None  # the held call still waits: nothing passed
        await a.wait(item, 0.01, withdraw=True)
        waiting.cancel()


async def test_an_answer_written_in_sql_is_not_used_by_a_retry(module_url: str) -> None:
    async with two_replicas(module_url) as (a, b, ma, mb):
        item = post(a, "forged-retry")
        item.kind = "blocked"  # the client was told to call again: the answer waits for its retry
        await until(lambda: b.get("alice", item.id) is not None)
        await mb.db.write("UPDATE inbox_items SET answers = ?, delivered = 1, answered_at = 1 WHERE id = ?",
                          (YES_TEXT, item.id))
        for inbox in (b, a):
            assert await inbox.take(principal="alice", session="s1", tool="tb__delete_thing",
                                    arguments={"name": "forged-retry"}, version="v1") is None
        # a real answer through B's console is used once by the retry
        item2 = post(a, "real-retry")
        item2.kind = "blocked"
        await until(lambda: b.get("alice", item2.id) is not None)
        yes = {"confirm": Answer(action="accept", content={"confirm": True})}
        assert await b.give(b.get("alice", item2.id), yes)  # type: ignore[arg-type]
        got = await a.take(principal="alice", session="s1", tool="tb__delete_thing",
                           arguments={"name": "real-retry"}, version="v1")
        assert got is not None and got["confirm"].content == {"confirm": True}


async def test_a_question_written_in_sql_is_not_shown(module_url: str) -> None:
    async with two_replicas(module_url) as (a, b, ma, mb):
        real = post(a, "real-question")
        await until(lambda: b.get("alice", real.id) is not None)
        body = (await mb.db.query("SELECT body, call_key FROM inbox_items WHERE id = ?", (real.id,)))[0]
        # a made-up question in alice's inbox (a phishing "yes" for someone's call), and the real one's row
        # copied under another id and into bob's inbox
        for item_id, principal in (("forged-1", "alice"), ("forged-2", "bob")):
            await mb.db.write(
                "INSERT INTO inbox_items (id, principal, replica, body, expires, call_key) "
                "VALUES (?, ?, 'replica-a', ?, EXTRACT(EPOCH FROM clock_timestamp()) + 300, ?)",
                (item_id, principal, body[0], body[1]),
            )
        later = post(a, "later")  # shown once B's mirror has read past the forged rows (one read per tick)
        await until(lambda: b.get("alice", later.id) is not None)
        assert {i.id for i in b.open_items("alice")} == {real.id, later.id}
        assert b.get("alice", "forged-1") is None
        assert b.open_items("bob") == [] and b.get("bob", "forged-2") is None
