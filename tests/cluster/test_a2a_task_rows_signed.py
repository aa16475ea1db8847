"""A2A task rows (``a2a_task``) are signed by the replica that wrote them (``a2a/task_rows.py``) and verified
on every read: someone who can write the shared database but does not hold ``sentinel.cluster.seal_key``
cannot give a task to another owner, swap the call a take-over would run, copy or move a row, edit the
question the console shows, or put back an older round another replica has seen. Such a row is refused (never
read, claimed, continued or ended), counted and logged; the sweeper and a take-over re-sign what they
rewrite."""

from __future__ import annotations

import json
import logging
import uuid

import psycopg
import pytest

from sentinel_mcp.a2a.jsonrpc import RpcError
from sentinel_mcp.a2a.protocol import Message, Part, Task, TaskStatus, now_iso
from sentinel_mcp.a2a.task_journal import TaskJournal
from sentinel_mcp.a2a.task_store import PendingCall, TaskRecord, TaskStore

KEY = b"k" * 32
WAITING = "TASK_STATE_INPUT_REQUIRED"
HOLDER = "SELECT lease_holder, replica FROM a2a_task WHERE id = %s"
COLS = "id, owner, session_id, state, updated, task, pending, replica, lease_holder, rev, mac"


def waiting(owner: str = "alice", question: str = "Which colour?", tool: str = "shop__pay") -> TaskRecord:
    tid = str(uuid.uuid4())
    ask = Message(message_id=str(uuid.uuid4()), task_id=tid, role="ROLE_AGENT",
                  parts=[Part.of_text(question)])
    task = Task(id=tid, context_id=str(uuid.uuid4()),
                status=TaskStatus(state=WAITING, message=ask, timestamp=now_iso()))  # type: ignore[arg-type]
    return TaskRecord(task=task, owner=owner, session_id=f"{owner}/s",
                      pending=PendingCall(tool, {"amount": 5}, ["k"], "tool_call", tool))


def sql(url: str, text: str, params: tuple = ()) -> list[tuple]:
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(text, params)
        return cur.fetchall() if cur.description else []


async def journals(url: str, *names: str, key: bytes = KEY) -> list[TaskJournal]:
    out = []
    for name in names:
        j = TaskJournal(url, name, lease_seconds=600, key=key)
        await j.open()
        out.append(j)
    return out


async def test_a_signed_row_is_read_claimed_and_ended_on_every_replica(pg_url: str) -> None:
    a, b, c = await journals(pg_url, "replica-a", "replica-b", "replica-c")
    try:
        rec = waiting()
        await a.commit(rec)
        got = await b.read(rec.task.id, "alice")
        assert got is not None and got.pending == rec.pending
        assert [r.task.id for r in await b.waiting("alice", 10)] == [rec.task.id]
        assert await b.claim(got)  # a take-over re-signs the row it rewrites
        again = await c.read(rec.task.id, "alice")
        assert again is not None and again.replica == "replica-b" and again.pending == rec.pending
        running = waiting()
        running.pending = None
        running.task.status = TaskStatus(state="TASK_STATE_WORKING", timestamp=now_iso())  # type: ignore
        await a.commit(running)
        sql(pg_url, "UPDATE a2a_task SET lease_until = 0 WHERE id = %s", (running.task.id,))
        assert await c.end_lapsed() == [running.task.id]  # the sweeper re-signs the FAILED row
        ended = await b.read(running.task.id, "alice")
        assert ended is not None and ended.task.status.state == "TASK_STATE_FAILED"
        assert a.refused == b.refused == c.refused == 0
    finally:
        for j in (a, b, c):
            await j.close()


ATTACKS = {
    "forged owner": "UPDATE a2a_task SET owner = 'mallory' WHERE id = %(id)s",
    "swapped pending call": "UPDATE a2a_task SET pending = replace(pending, 'shop__pay', 'bank__wire') "
                            "WHERE id = %(id)s",
    "bigger amount": "UPDATE a2a_task SET pending = replace(pending, '5', '5000') WHERE id = %(id)s",
    "edited question": "UPDATE a2a_task SET task = replace(task, 'Which colour?', 'Type your password') "
                       "WHERE id = %(id)s",
    "another session": "UPDATE a2a_task SET session_id = 'bob/s' WHERE id = %(id)s",
    "state column only": "UPDATE a2a_task SET state = 'TASK_STATE_COMPLETED' WHERE id = %(id)s",
    "copied from another task": "UPDATE a2a_task SET (task, pending, mac) = (SELECT task, pending, mac FROM "
                                "a2a_task WHERE id = %(other)s) WHERE id = %(id)s",
    "no signature": "UPDATE a2a_task SET mac = '' WHERE id = %(id)s",
    "signature of another row": "UPDATE a2a_task SET mac = (SELECT mac FROM a2a_task WHERE id = %(other)s) "
                                "WHERE id = %(id)s",
    "rev moved on": "UPDATE a2a_task SET rev = rev + 7 WHERE id = %(id)s",
}


@pytest.mark.parametrize("attack", list(ATTACKS))
async def test_a_row_changed_in_sql_is_refused_everywhere(pg_url: str, attack: str,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    a, b = await journals(pg_url, "replica-a", "replica-b")
    try:
        rec, other = waiting(), waiting("bob", "Which size?", "shop__ship")
        await a.commit(rec)
        await a.commit(other)
        before = sql(pg_url, HOLDER, (rec.task.id,))
        sql(pg_url, ATTACKS[attack], {"id": rec.task.id, "other": other.task.id})
        caplog.set_level(logging.WARNING)
        for who in ("alice", "mallory", "bob"):
            assert await b.read(rec.task.id, who) is None
            assert rec.task.id not in [r.task.id for r in await b.owned(who, 10)]
            assert rec.task.id not in [r.task.id for r in await b.waiting(who, 10)]
        store = TaskStore(journal=b)
        for who in ("alice", "mallory"):
            with pytest.raises(RpcError):  # no take-over: its call never runs there
                await store.held(rec.task.id, who)
        assert b.refused > 0 and "not signed" in caplog.text
        assert sql(pg_url, HOLDER, (rec.task.id,)) == before
        (fresh,) = await journals(pg_url, "replica-c")  # a replica started since: the same
        for who in ("alice", "mallory"):
            assert await fresh.read(rec.task.id, who) is None
        await fresh.close()
    finally:
        await a.close()
        await b.close()


async def test_a_moved_row_and_another_key_are_refused(pg_url: str) -> None:
    a, b = await journals(pg_url, "replica-a", "replica-b")
    (stranger,) = await journals(pg_url, "replica-x", key=b"x" * 32)
    try:
        rec = waiting()
        await a.commit(rec)
        moved = str(uuid.uuid4())
        sql(pg_url, "UPDATE a2a_task SET id = %s WHERE id = %s", (moved, rec.task.id))
        assert await b.read(moved, "alice") is None and await b.owned("alice", 10) == []
        sql(pg_url, "UPDATE a2a_task SET id = %s WHERE id = %s", (rec.task.id, moved))  # back: fine again
        assert await b.read(rec.task.id, "alice") is not None
        assert await stranger.read(rec.task.id, "alice") is None  # signed with another key: not ours
        forged = waiting()
        await stranger.commit(forged)  # a made-up row, signed by a key this cluster does not hold
        assert await b.read(forged.task.id, "alice") is None
    finally:
        for j in (a, b, stranger):
            await j.close()


async def test_an_older_round_put_back_is_refused_where_a_newer_one_was_seen(pg_url: str) -> None:
    a, b = await journals(pg_url, "replica-a", "replica-b")
    try:
        rec = waiting()
        await a.commit(rec)
        old = sql(pg_url, f"SELECT {COLS} FROM a2a_task WHERE id = %s", (rec.task.id,))[0]
        got = await b.read(rec.task.id, "alice")
        assert got is not None and await b.claim(got)  # b takes the round over and runs it
        got.task.status = TaskStatus(state="TASK_STATE_WORKING", timestamp=now_iso())  # type: ignore
        got.pending = None
        await b.commit(got)
        done = got.task.model_copy(update={"status": TaskStatus(state="TASK_STATE_COMPLETED",  # type: ignore
                                                                timestamp=now_iso())})
        await b.commit(got, done)
        assert (await a.read(rec.task.id, "alice")).task.status.state == "TASK_STATE_COMPLETED"  # type: ignore
        sets = ", ".join(f"{c} = %s" for c in COLS.split(", ")[1:])
        sql(pg_url, f"UPDATE a2a_task SET {sets} WHERE id = %s", (*old[1:], rec.task.id))  # put back
        for j in (a, b):  # both saw a later round: the old one is not taken again (its call already ran)
            assert await j.read(rec.task.id, "alice") is None
            with pytest.raises(RpcError):
                await TaskStore(journal=j).held(rec.task.id, "alice")
        assert b.refused > 0
    finally:
        await a.close()
        await b.close()


async def test_the_sweeper_never_ends_a_forged_lapsed_row(pg_url: str) -> None:
    a, b = await journals(pg_url, "replica-a", "replica-b")
    try:
        rec = waiting()
        rec.pending = None
        rec.task.status = TaskStatus(state="TASK_STATE_WORKING", timestamp=now_iso())  # type: ignore
        await a.commit(rec)
        sql(pg_url, "UPDATE a2a_task SET lease_until = 0, owner = 'bob', "
                    "task = replace(task, 'Which colour?', 'Click here') WHERE id = %s", (rec.task.id,))
        assert await b.end_lapsed() == []  # not signed: not ended (nothing of it would be signed afresh)
        assert await b.end_lapsed() == []  # and not looked at again and again
        row = sql(pg_url, "SELECT state, mac FROM a2a_task WHERE id = %s", (rec.task.id,))[0]
        assert row[0] == "TASK_STATE_WORKING"
        assert await b.read(rec.task.id, "bob") is None
        assert json.loads(sql(pg_url, "SELECT task FROM a2a_task WHERE id = %s", (rec.task.id,))[0][0])
    finally:
        await a.close()
        await b.close()


async def test_a_running_task_from_before_signing_is_ended_failed_once_its_lease_lapsed(pg_url: str) -> None:
    """A row written before the upgrade that signed them (``mac`` empty, the column's default) was refused for
    good: a running task from before stayed WORKING, never ended. Once its lease lapsed, the sweeper ends it
    FAILED saying why, keeping nothing of what it cannot vouch for (its history, artifacts, question); a row
    whose lease has not lapsed (an older replica may still run it), or that is not running, is left alone."""
    a, b, c = await journals(pg_url, "replica-a", "replica-b", "replica-c")
    try:
        old, live, asking = waiting(question="Old secret question"), waiting(), waiting()
        for rec in (old, live):
            rec.pending = None
            rec.task.status = TaskStatus(state="TASK_STATE_WORKING", timestamp=now_iso())  # type: ignore
        for rec in (old, live, asking):
            await a.commit(rec)
        # as the store was before signing: no signature (the default), the replica that ran it gone
        sql(pg_url, "UPDATE a2a_task SET mac = ''")
        sql(pg_url, "UPDATE a2a_task SET lease_until = 0 WHERE id = %s", (old.task.id,))
        assert await b.end_lapsed() == [old.task.id]
        assert await c.end_lapsed() == []  # ended once
        for j in (b, c, a):
            ended = await j.read(old.task.id, "alice")
            assert ended is not None and ended.task.status.state == "TASK_STATE_FAILED"
            said = " ".join(p.text or "" for p in ended.task.status.message.parts)  # type: ignore[union-attr]
            assert "before" in said and "signed" in said, said
            assert "Old secret question" not in ended.task.model_dump_json()  # nothing of it vouched for
            assert ended.pending is None
            assert await j.read(old.task.id, "bob") is None
            assert await j.read(live.task.id, "alice") is None  # still unsigned, not lapsed: left alone
            assert await j.read(asking.task.id, "alice") is None
        state = sql(pg_url, "SELECT state FROM a2a_task WHERE id = %s", (live.task.id,))
        assert state == [("TASK_STATE_WORKING",)]
    finally:
        for j in (a, b, c):
            await j.close()
