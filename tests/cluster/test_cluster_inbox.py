"""Two replicas' console inboxes (in one process: each its own ``Inbox`` and ``ClusterInbox``) on a real
PostgreSQL: a question held by A is listed by B for its principal only; B's answer reaches A's waiting call
once;
an answer for another principal, a second answer and a forged answer row count for nothing; with the server
down B lists nothing of A's and claims nothing (fail closed), and both recover by themselves."""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from pathlib import Path
from typing import AsyncIterator, Callable

import pytest

from sentinel_mcp.console.cluster_inbox import ClusterInbox
from sentinel_mcp.console.inbox import Inbox, InboxItem
from sentinel_mcp.core.decision import Answer, Question
from sentinel_mcp.storage.local_server import LocalServer
from tests.conftest import free_port

pytestmark = pytest.mark.timeout(120)
TICKS = 60  # waits for the mirrors' polls, bounded by count


@pytest.fixture
async def server() -> AsyncIterator[LocalServer]:
    root = Path(tempfile.mkdtemp(prefix="sentinel-pg-inbox-"))
    srv = LocalServer(root / "pg", free_port())
    try:
        await asyncio.to_thread(lambda: srv.init().start())
        yield srv
    finally:
        await asyncio.to_thread(srv.stop, "immediate")
        shutil.rmtree(root, ignore_errors=True)


async def until(check: Callable[[], bool]) -> None:
    for _ in range(TICKS):
        if check():
            return
        await asyncio.sleep(0.1)
    raise AssertionError("not within the bounded wait")


def post(inbox: Inbox, principal: str, name: str) -> InboxItem:
    question = Question(
        key="confirm",
        message=f"Delete {name}?",
        requested_schema={
            "type": "object",
            "properties": {"confirm": {"type": "boolean"}},
            "required": ["confirm"],
        },
    )
    return inbox.post(
        principal=principal,
        session="s1",
        client="c",
        tool="tb__delete_thing",
        arguments={"name": name},
        shown_arguments={"name": name},
        version="v1",
        reason="asks",
        questions=[question],
        kind="held",
    )


YES = {"confirm": Answer(action="accept", content={"confirm": True}, provenance="agent")}


async def test_two_replicas_share_questions_and_count_an_answer_once(server: LocalServer) -> None:
    a, b = Inbox(), Inbox()
    mirror_a = await ClusterInbox(a, server.url, "replica-a").start()
    mirror_b = await ClusterInbox(b, server.url, "replica-b").start()
    try:
        item = post(a, "alice", "thing-1")
        waiting = asyncio.create_task(a.wait(item, 60))
        await until(lambda: [i.id for i in b.open_items("alice")] == [item.id])
        assert b.open_items("bob") == [] and b.get("bob", item.id) is None  # another principal: nothing
        shown = b.get("alice", item.id)
        assert shown is not None and shown.replica == "replica-a" and shown.arguments == {"name": "thing-1"}
        # bob's answer by alice's item id (as if his console had it): matches no row
        forged = InboxItem(**{**shown.__dict__, "principal": "bob", "settled": asyncio.Event()})
        assert not await b.give(forged, YES)
        assert await b.give(shown, YES)
        assert not await b.give(shown, YES) and not await a.give(item, YES)  # once, on either replica
        answers = await asyncio.wait_for(waiting, 30)
        assert answers is not None and answers["confirm"].provenance == "user"  # given in a console
        await until(lambda: b.open_items("alice") == [])

        # a question withdrawn by its holder leaves B; a late answer claims nothing
        item2 = post(a, "alice", "thing-2")
        await until(lambda: len(b.open_items("alice")) == 1)
        late = b.get("alice", item2.id)
        assert late is not None
        assert await a.wait(item2, 0.01, withdraw=True) is None
        await until(lambda: b.open_items("alice") == [])
        assert not await b.give(late, YES)

        # server down: B shows nothing of A's and claims nothing; back: both recover by themselves
        item3 = post(a, "alice", "thing-3")
        await until(lambda: len(b.open_items("alice")) == 1)
        held = b.get("alice", item3.id)
        assert held is not None
        await asyncio.to_thread(server.stop, "immediate")
        await until(lambda: b.open_items("alice") == [])
        assert not await b.give(held, YES)
        await asyncio.to_thread(server.start)
        await until(lambda: len(b.open_items("alice")) == 1)
        waiting = asyncio.create_task(a.wait(item3, 60))
        assert await b.give(b.get("alice", item3.id), YES)  # type: ignore[arg-type]
        assert (await asyncio.wait_for(waiting, 30)) is not None
    finally:
        await mirror_b.stop()
        await mirror_a.stop()


RACES = 4  # retries racing on two replicas, bounded by count


async def take(
    inbox: Inbox, principal: str = "alice", name: str = "thing", session: str = "s1", version: str = "v1"
) -> dict[str, Answer] | None:
    return await inbox.take(
        principal=principal,
        session=session,
        tool="tb__delete_thing",
        arguments={"name": name},
        version=version,
    )


async def test_an_answer_waiting_for_a_retry_is_used_once_on_any_replica(server: LocalServer) -> None:
    a, b, c = Inbox(), Inbox(), Inbox()
    mirrors = [await ClusterInbox(i, server.url, f"replica-{n}").start() for n, i in zip("abc", (a, b, c))]
    try:
        for n in range(RACES):
            name = f"race-{n}"
            item = post(a, "alice", name)
            item.kind = "blocked"  # the client was told to call again
            await until(lambda: len(c.open_items("alice")) == 1)
            assert await c.give(c.get("alice", item.id), YES)  # type: ignore[arg-type]
            # listed as waiting for the retry on every replica (alice's only)
            await until(
                lambda: all([i.id for i in x.answered_items("alice")] == [item.id] for x in (a, b, c))
            )
            assert b.answered_items("bob") == []
            # not the same call: another principal, arguments, conversation or policy version
            assert await take(b, principal="bob", name=name) is None
            assert await take(b, name=name + "x") is None
            assert await take(b, name=name, session="s2") is None
            assert await take(b, name=name, version="v2") is None
            # the retry sent to A and to B at once: exactly one uses the answer (provenance user)
            got = await asyncio.gather(take(a, name=name), take(b, name=name))
            used = [g for g in got if g is not None]
            assert len(used) == 1 and used[0]["confirm"].provenance == "user", got
            assert await take(a, name=name) is None and await take(c, name=name) is None
            await until(lambda: all(x.answered_items("alice") == [] for x in (a, b, c)))

        # a held call and a retry elsewhere race for one answer: exactly one gets it
        item = post(a, "alice", "held")
        waiting = asyncio.create_task(a.wait(item, 60))
        await until(lambda: len(b.open_items("alice")) == 1)
        retry = asyncio.create_task(take(b, name="held"))
        assert await b.give(b.get("alice", item.id), YES)  # type: ignore[arg-type]
        results = [await asyncio.wait_for(waiting, 30), await retry]
        for _ in range(TICKS):  # the retry may have come before the answer: it tries again, bounded
            if results[1] is not None or results[0] is not None:
                break
            results[1] = await take(b, name="held")
            await asyncio.sleep(0.1)
        assert len([r for r in results if r is not None]) == 1, results

        # store down: a retry is asked again (nothing used); back: the answer is still there, used once
        item = post(a, "alice", "down")
        item.kind = "blocked"
        await until(lambda: len(b.open_items("alice")) == 1)
        assert await b.give(b.get("alice", item.id), YES)  # type: ignore[arg-type]
        await asyncio.to_thread(server.stop, "immediate")
        assert await take(c, name="down") is None
        await asyncio.to_thread(server.start)
        got_back = None
        for _ in range(TICKS):  # the store's pool reconnects by itself, bounded
            got_back = await take(c, name="down")
            if got_back is not None:
                break
            await asyncio.sleep(0.1)
        assert got_back is not None and await take(a, name="down") is None
    finally:
        for mirror in reversed(mirrors):
            await mirror.stop()


class _Behind:
    """A replica's clock an hour behind (``time`` as ``cluster_inbox`` reads it)."""

    @staticmethod
    def time() -> float:
        import time

        return time.time() - 3600


async def test_a_replica_whose_clock_lags_never_uses_an_expired_answer(
    server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An answer waits for the retry for the inbox's time to live, on the database's clock: before, the
    window was the answering replica's clock and each retrying replica compared it with its own, so a replica
    an hour behind let a retry use an answer that had expired ten minutes before."""
    import sentinel_mcp.console.cluster_inbox as cluster_inbox

    a, b = Inbox(), Inbox()
    mirror_a = await ClusterInbox(a, server.url, "replica-a").start()
    mirror_b = await ClusterInbox(b, server.url, "replica-b").start()
    try:
        item = post(a, "alice", "late")
        item.kind = "blocked"  # the client was told to call again
        await until(lambda: len(b.open_items("alice")) == 1)
        assert await b.give(b.get("alice", item.id), YES)  # type: ignore[arg-type]
        # the answer's window ended ten minutes ago, by the cluster's clock
        await mirror_a.db.write(
            "UPDATE inbox_items SET expires = EXTRACT(EPOCH FROM clock_timestamp()) - 600 WHERE id = ?",
            (item.id,),
        )
        monkeypatch.setattr(cluster_inbox, "time", _Behind)
        assert await take(b, name="late") is None
        assert await take(a, name="late") is None
    finally:
        await mirror_a.stop()
        await mirror_b.stop()


async def test_a_huge_argument_is_shared_cut_as_the_audit_keeps_it(server: LocalServer) -> None:
    """A client's megabyte of arguments is not a megabyte row every replica reads each tick: the shared
    copy is cut as the audit cuts it, says so with the full value's digest, and the answer still reaches the
    call."""
    from sentinel_mcp.core.record_bounds import CUT_KEY, KEPT_KEY, canonical_digest

    a, b = Inbox(), Inbox()
    mirror_a = await ClusterInbox(a, server.url, "replica-a").start()
    mirror_b = await ClusterInbox(b, server.url, "replica-b").start()
    try:
        nested: object = "leaf"
        for _ in range(200):
            nested = [nested]
        huge = {"name": "x" * 1_000_000, "deep": nested}
        item = a.post(
            principal="alice", session="s1", client="c", tool="tb__delete_thing", arguments=huge,
            shown_arguments=huge, version="v1", reason="asks", questions=post(Inbox(), "x", "y").questions,
            kind="held",
        )
        waiting = asyncio.create_task(a.wait(item, 60))
        await until(lambda: len(b.open_items("alice")) == 1)
        shown = b.get("alice", item.id)
        assert shown is not None and isinstance(shown.arguments, dict)
        notice = shown.arguments[CUT_KEY]
        assert notice["full_sha256"] == canonical_digest(huge)[0]
        assert len(json.dumps(shown.arguments[KEPT_KEY])) < 5000
        rows = await mirror_b.db.query("SELECT body FROM inbox_items WHERE id = ?", (item.id,))
        assert len(rows) == 1 and len(rows[0][0]) < 10_000
        assert a.get("alice", item.id) is item and item.arguments is huge  # the holder's own copy is whole
        assert await b.give(shown, YES)
        assert (await asyncio.wait_for(waiting, 30)) is not None
    finally:
        await mirror_b.stop()
        await mirror_a.stop()


async def test_an_answer_to_a_question_asked_anew_since_it_was_shown_counts_for_nothing(
    server: LocalServer,
) -> None:
    """The same call asked again refreshes its item in place, under the same id, with the policy's new text
    ("Delete thing for 1?" became "... for 2?"). Another replica's copy lags its poll: a person who answered
    the copy shown let the call go ahead under a question they never read. The answer is bound to the signed
    question row it was shown from; once that row asks something else, the claim matches nothing."""
    a, b = Inbox(), Inbox()
    mirror_a = await ClusterInbox(a, server.url, "replica-a").start()
    mirror_b = await ClusterInbox(b, server.url, "replica-b").start()
    try:
        item = post(a, "alice", "thing")
        waiting = asyncio.create_task(a.wait(item, 60))
        await until(lambda: [i.id for i in b.open_items("alice")] == [item.id])
        stale = b.get("alice", item.id)  # what B's page showed
        assert stale is not None and stale.questions[0].message == "Delete thing?"
        asked_anew = Question(key="confirm", message="Delete EVERY thing?",
                              requested_schema=item.questions[0].requested_schema)
        again = a.post(principal="alice", session="s1", client="c", tool="tb__delete_thing",
                       arguments={"name": "thing"}, shown_arguments={"name": "thing"}, version="v1",
                       reason="asks", questions=[asked_anew], kind="held")
        assert again.id == item.id  # refreshed in place
        await until(lambda: [q.message for i in b.open_items("alice") for q in i.questions]
                    == ["Delete EVERY thing?"])
        assert not await b.give(stale, YES)  # the answer to the old text
        assert not waiting.done()
        await until(lambda: b.get("alice", item.id) is not None)  # listed again at B's next poll
        fresh = b.get("alice", item.id)
        assert fresh is not None and fresh.questions[0].message == "Delete EVERY thing?"
        assert await b.give(fresh, YES)  # the text shown now: taken
        assert (await asyncio.wait_for(waiting, 30)) is not None
    finally:
        await mirror_b.stop()
        await mirror_a.stop()


async def test_a_question_asked_anew_while_its_answer_is_being_counted_takes_no_answer(
    server: LocalServer,
) -> None:
    """On the replica holding the call, counting the console's answer waits for the shared store (the
    question's copy, then the claim). The same call asked anew with another text meanwhile: the answer
    given to the first text let the call go ahead under the second. It is not taken, the store keeps no
    answer a retry could use, and the question, as asked now, is still open."""
    a = Inbox()
    mirror_a = await ClusterInbox(a, server.url, "replica-a").start()
    try:
        item = post(a, "alice", "thing")
        shown = item.questions  # what the console page showed and checked the form against
        giving = asyncio.create_task(a.give(item, YES))
        await asyncio.sleep(0)  # the give waits on the store
        asked_anew = Question(key="confirm", message="Delete EVERY thing?",
                              requested_schema=shown[0].requested_schema)
        a.post(principal="alice", session="s1", client="c", tool="tb__delete_thing",
               arguments={"name": "thing"}, shown_arguments={"name": "thing"}, version="v1",
               reason="asks", questions=[asked_anew], kind="held")
        assert not await giving
        assert item.open and item.answers is None and item.questions[0].message == "Delete EVERY thing?"
        await asyncio.gather(mirror_a._published[item.id])  # the refreshed question's copy is written
        assert await take(a) is None  # no answer waits for a retry either
        assert await a.give(item, YES)  # the text as asked now: taken
    finally:
        await mirror_a.stop()


async def test_another_replicas_copy_says_whose_call_asked(server: LocalServer) -> None:
    """A question an agent's call put in the owner's inbox (``asker``: the caller, not the person) reads on
    every replica as that caller's: the shared row did not carry it, so another replica's card named the
    owner's call, and counted the agent's questions against the owner's bound there."""
    a, b = Inbox(), Inbox()
    mirror_a = await ClusterInbox(a, server.url, "replica-a").start()
    mirror_b = await ClusterInbox(b, server.url, "replica-b").start()
    try:
        own = post(a, "owner", "own-thing")
        agents = a.post(
            principal="owner", session="s2", client="c", tool="tb__delete_thing", arguments={"name": "x"},
            shown_arguments={"name": "x"}, version="v1", reason="asks", questions=own.questions,
            kind="waiting", asker="agent-7",
        )
        assert (own.asked_by, agents.asked_by) == ("owner", "agent-7")
        await until(lambda: len(b.open_items("owner")) == 2)
        copies = {i.id: i.asked_by for i in b.open_items("owner")}
        assert copies == {own.id: "owner", agents.id: "agent-7"}, copies
        assert b.open_items("agent-7") == []  # whose inbox it is did not change: the person's
    finally:
        await mirror_b.stop()
        await mirror_a.stop()
