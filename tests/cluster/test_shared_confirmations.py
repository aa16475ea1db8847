"""The default guard's confirmations and plain-label conversations in the store replicas share, on both
backends (SQLite file, real PostgreSQL): a confirmation is bound to its session, tool, arguments and policy
version, expires, and is used once, also by replicas (processes) racing for it; a label names one
conversation per principal for every replica, a new one after its idle time to live; a malformed row or an
unreachable store grants nothing."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from sentinel_mcp.core.decision import Allow, Answer, Ask, ToolCall
from sentinel_mcp.storage.conversation_names import PURPOSE, LabelsUnavailable, SharedLabels
from sentinel_mcp.gateway.conversations import Conversations, SessionRefused
from sentinel_mcp.identity.principal import Principal
from sentinel_mcp.policy.confirmation_book import SharedConfirmationBook
from sentinel_mcp.policy.default_guard import DefaultGuard
from sentinel_mcp.storage import open_database
from sentinel_mcp.storage.local_server import LocalServer
from tests.conftest import free_port
from sentinel_mcp.storage.open import release
from sentinel_mcp.storage.row_signature import PROCESS_KEY, sign
from tests.cluster.race_worker import SEAL_KEY
from tests.cluster.test_single_use_across_replicas import ROUNDS, race

VERSION = "default:fail-safe"


def pay(session: str = "alice/label-x-1", **arguments: object) -> ToolCall:
    return ToolCall(name="srv__pay", server="srv", tool="pay", arguments=arguments or {"n": 1},
                    session_id=session)


async def test_a_confirmation_is_bound_expires_and_is_used_once(store_location: str) -> None:
    db = open_database(store_location, "confirmations")
    try:
        clock = [1000.0]
        book = await SharedConfirmationBook.open(db, 60)
        book._clock = lambda: clock[0]  # noqa: SLF001 - the test's clock
        other = SharedConfirmationBook(db, 60, clock=lambda: clock[0])  # another replica on the same store
        await book.grant(pay(), VERSION)
        # another session, tool, argument or version matches nothing
        for call, version in ((pay("bob/label-x-1"), VERSION), (pay(n=2), VERSION), (pay(), "default:deny"),
                              (ToolCall(name="srv__pay2", server="srv", tool="pay2", arguments={"n": 1},
                                        session_id="alice/label-x-1"), VERSION)):
            assert not await other.take(call, version)
        assert await other.take(pay(), VERSION)  # given through one replica, used on another
        assert not await book.take(pay(), VERSION) and not await other.take(pay(), VERSION)  # once
        await book.grant(pay(), VERSION)
        clock[0] += 61  # expired: not used, and gone (a server store's expiry is on the database's clock)
        await db.write("UPDATE confirmations SET expires_at = expires_at - 61")
        assert not await other.take(pay(), VERSION)
        assert (await db.query("SELECT count(*) FROM confirmations"))[0][0] == 0
        await book.grant(pay(), VERSION)
        await book.grant(pay(), VERSION)  # granted twice before use: still one call
        assert await other.take(pay(), VERSION) and not await book.take(pay(), VERSION)
    finally:
        await release(db)


async def test_the_default_guard_asks_uses_and_asks_again_across_replicas(store_location: str) -> None:
    db = open_database(store_location, "confirmations")
    try:
        a, b = DefaultGuard(), DefaultGuard()
        for g in (a, b):
            g.share_confirmations(await SharedConfirmationBook.open(db, 60))
        first = await a.decide(pay())
        assert isinstance(first, Ask)
        q = first.questions[0]
        # only the user's JSON true grants it: strings, numbers, an agent's yes grant nothing
        for content, provenance in (({"approve": "true"}, "user"), ({"approve": 1}, "user"),
                                    ({"approve": True}, "agent"), ({"approve": False}, "user")):
            await a.record_answer(pay(), q, Answer(action="accept", content=content, provenance=provenance))
            assert isinstance(await b.decide(pay()), Ask), (content, provenance)
        await a.record_answer(pay(), q, Answer(action="accept", content={"approve": True}))
        assert isinstance(await b.decide(pay()), Allow)  # given on A, used on B
        assert isinstance(await a.decide(pay()), Ask) and isinstance(await b.decide(pay()), Ask)
    finally:
        await release(db)


async def test_each_default_confirmation_is_used_by_exactly_one_replica(pg_url: str) -> None:
    db = open_database(pg_url, "confirmations")
    book = await SharedConfirmationBook.open(db, 300, key=SEAL_KEY)  # the replicas' (signed with it)
    try:
        keys = [f"alice/label-s{i}-1" for i in range(ROUNDS)]
        for k in keys:
            await book.grant(pay(k), VERSION)
        won = await asyncio.to_thread(race, pg_url, "default-confirmation", keys)
        counts = Counter(k for w in won for k in w)
        assert set(counts) == set(keys) and set(counts.values()) == {1}, counts.most_common(3)
        assert (await db.query("SELECT count(*) FROM confirmations"))[0][0] == 0
    finally:
        await release(db)


async def test_a_label_names_one_conversation_per_principal_for_every_replica(store_location: str) -> None:
    db = open_database(store_location, "labels")
    try:
        clock = [5000.0]
        a = await SharedLabels.open(db, 3600)
        a._clock = lambda: clock[0]  # noqa: SLF001
        b = SharedLabels(db, 3600, refresh=0, clock=lambda: clock[0])
        first = await asyncio.gather(a.session("alice", "trip"), b.session("alice", "trip"))
        assert first[0] == first[1] and first[0].startswith("alice/label-trip-")
        assert await b.session("bob", "trip") != first[0]
        assert (await b.session("bob", "trip")).startswith("bob/label-trip-")
        clock[0] += 3000  # used within its time to live: kept
        assert await b.session("alice", "trip") == first[0]
        clock[0] += 3601  # idle past it: a new conversation for every replica
        await db.write("UPDATE conversation_labels SET used_at = used_at - 3601")  # a server's: its own clock
        fresh = await b.session("alice", "trip")
        assert fresh != first[0] and fresh.startswith("alice/label-trip-")
        a.refresh = 0
        assert await a.session("alice", "trip") == fresh
        # a malformed row (another principal's id, another label's, too long) written in SQL is never used:
        # unsigned, it gives way to a new conversation of alice's own
        for bad in ("bob/label-trip-1", "alice/label-other-1", "alice/label-trip-" + "x" * 100):
            await db.write("UPDATE conversation_labels SET session = ? WHERE principal = 'alice'", (bad,))
            now = await b.session("alice", "trip")
            assert now != bad and now.startswith("alice/label-trip-") and len(now) == len(fresh)
        # one signed but malformed (as no replica writes it) is refused, never used
        await db.write("UPDATE conversation_labels SET session = ?, mac = ? WHERE principal = 'alice'",
                       ("bob/label-trip-1", sign(PROCESS_KEY, PURPOSE, "alice", "trip", "bob/label-trip-1")))
        with pytest.raises(LabelsUnavailable):
            await b.session("alice", "trip")
    finally:
        await release(db)


async def test_conversations_resolve_labels_through_the_shared_store(pg_url: str) -> None:
    db = open_database(pg_url, "labels")
    alice, bob = Principal("alice", "token"), Principal("bob", "token")
    try:
        a, b = Conversations(), Conversations()
        for c in (a, b):
            c.labels = await SharedLabels.open(db, 3600)
        conv = await a.resolve("trip", alice)
        assert (await b.resolve(" trip ", alice)).id == conv.id
        assert (await b.resolve("trip", bob)).id != conv.id
        with pytest.raises(SessionRefused):  # bob names alice's conversation by its id
            await b.resolve(conv.id, bob)
        # an A2A context's conversation is another namespace: no client label can name it
        context = await a.labels.session("alice", "0123abcd", kind="a2a")  # type: ignore[union-attr]
        assert context.startswith("alice/a2a-0123abcd-")
        assert context != (await a.resolve("0123abcd", alice)).id
        for hostile in ("a2a:0123abcd", "../trip", "trip\x00", "t" * 65, "tr\nip", "trïp", "", "a b", "*",
                        "'; DROP TABLE x"):
            with pytest.raises(SessionRefused):
                await b.resolve(hostile, alice)
        sealed = a.sealed(conv)  # the sealed id still works (the same seal key on every replica)
        b.seal = a.seal
        assert (await b.resolve(sealed, alice)).id == conv.id
    finally:
        await release(db)


async def test_an_unreachable_store_refuses_labels_and_grants_no_confirmation() -> None:
    import tempfile
    from pathlib import Path

    server = LocalServer(Path(tempfile.mkdtemp(prefix="sentinel-pg-")) / "pg", free_port())
    await asyncio.to_thread(lambda: server.init().start())
    db = open_database(server.url, "labels")
    try:
        conversations = Conversations()
        conversations.labels = await SharedLabels.open(db, 3600)
        conversations.labels.refresh = 0
        book = await SharedConfirmationBook.open(db, 60)
        guard = DefaultGuard()
        guard.share_confirmations(book)
        await book.grant(pay(), VERSION)
        await conversations.resolve("trip", Principal("alice", "token"))
        await asyncio.to_thread(server.stop, "immediate")
        with pytest.raises(SessionRefused, match="cannot say which conversation"):
            await conversations.resolve("trip", Principal("alice", "token"))
        assert isinstance(await guard.decide(pay()), Ask)  # not used: asked again
        await asyncio.to_thread(server.start)
        assert isinstance(await guard.decide(pay()), Allow)  # still there once the store is back
        assert (await conversations.resolve("trip", Principal("alice", "token"))).id.startswith("alice/")
    finally:
        await release(db)
        await asyncio.to_thread(server.stop, "immediate")


async def test_replicas_clocks_never_stretch_a_confirmation_past_its_time_to_live(pg_url: str) -> None:
    """Replicas' clocks disagree (skew): a confirmation's expiry is set and checked on the database's clock,
    as leases are. Before, a replica an hour ahead granted a "yes" that lived an hour and a minute on every
    replica, and a replica an hour behind used a "yes" that had expired everywhere else."""
    import time

    db = open_database(pg_url, "confirmations")
    try:
        await SharedConfirmationBook.open(db, 60)
        ahead = SharedConfirmationBook(db, 60, clock=lambda: time.time() + 3600)
        behind = SharedConfirmationBook(db, 60, clock=lambda: time.time() - 3600)
        await ahead.grant(pay(), VERSION)
        left = await db.query("SELECT expires_at - EXTRACT(EPOCH FROM clock_timestamp()) FROM confirmations")
        assert 0 < left[0][0] <= 60
        await db.write("UPDATE confirmations SET expires_at = EXTRACT(EPOCH FROM clock_timestamp()) - 600")
        assert not await behind.held(pay(), VERSION)
        assert not await behind.take(pay(), VERSION)  # expired ten minutes ago by the cluster's clock
        await behind.grant(pay(), VERSION)  # granted through the late replica: a full minute, not none
        assert await ahead.held(pay(), VERSION) and await ahead.take(pay(), VERSION)
    finally:
        await release(db)
