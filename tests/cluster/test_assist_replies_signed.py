"""A person's reply to another agent's help request (``a2a/assist_inbox.py``), kept in the store replicas
share, is sent back to that agent by whichever replica's task waits for it, as the person's word. So it is
signed by the replica that took it (a key derived from ``sentinel.cluster.seal_key``) and checked before it is
sent: someone who can write the database but does not hold the key cannot answer for the person, change the
reply, or move a reply to another request. Such a row is not taken for answered (the task waits on, then
ends)."""

from __future__ import annotations

import psycopg
import pytest

from sentinel_mcp.a2a.assist_inbox import AssistInbox

KEY = b"k" * 32


def sql(url: str, text: str, params: tuple = ()) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(text, params)


def ask(inbox: AssistInbox) -> str:
    return inbox.add(from_agent="peer-agent", reason="which account?", questions=["Which account?"],
                     task_id="t-1")


FORGERIES = {
    "answered in SQL": "UPDATE assist_requests SET status = 'answered', reply = 'yes, wire it all', "
                       "replied_at = '2026-01-01T00:00:00Z' WHERE id = %(id)s",
    "reply edited": "UPDATE assist_requests SET reply = 'yes, wire it all' WHERE id = %(answered)s",
    "reply moved": "UPDATE assist_requests SET (status, reply, replied_at, mac) = (SELECT status, reply, "
                   "replied_at, mac FROM assist_requests WHERE id = %(answered)s) WHERE id = %(id)s",
    "time changed": "UPDATE assist_requests SET replied_at = '2030-01-01T00:00:00Z' WHERE id = %(answered)s",
}


@pytest.mark.parametrize("forgery", list(FORGERIES))
def test_a_reply_written_in_sql_is_not_the_persons(pg_url: str, forgery: str) -> None:
    a, b = AssistInbox(pg_url, key=KEY), AssistInbox(pg_url, key=KEY)
    try:
        waiting, answered = ask(a), ask(a)
        assert b.answer(answered, "the blue one")  # the person, through another replica's console
        got = a.get(answered)
        assert got is not None and got["status"] == "answered" and got["reply"] == "the blue one"
        sql(pg_url, FORGERIES[forgery], {"id": waiting, "answered": answered})
        for request in (waiting, answered):
            row = a.get(request)
            assert row is not None
            if row["status"] == "answered":  # only the genuine reply, as given
                assert request == answered and forgery in ("answered in SQL", "reply moved")
                assert row["reply"] == "the blue one"
        target = answered if forgery in ("reply edited", "time changed") else waiting
        refused = a.get(target)
        assert refused is not None and refused["status"] != "answered" and not refused["reply"]
    finally:
        a.release()
        b.release()


def test_a_reply_signed_with_another_key_is_not_taken(pg_url: str) -> None:
    a, stranger = AssistInbox(pg_url, key=KEY), AssistInbox(pg_url, key=b"x" * 32)
    try:
        request = ask(a)
        assert stranger.answer(request, "the red one")
        row = a.get(request)
        assert row is not None and row["status"] != "answered"
        assert not a.answer(request, "the blue one")  # settled all the same: one reply only
    finally:
        a.release()
        stranger.release()
