"""Settled help requests (``assist_requests`` delivered, expired or canceled) are bounded: each new request
prunes those settled more than ``SETTLED_KEEP_DAYS`` ago and all but the newest ``MAX_SETTLED``. Before, every
request ever made stayed, so a peer asking and canceling in a loop grew the (shared) store without bound. An
open request is never pruned, whatever its age, nor a reply its requester's task has not read yet (status
``answered`` until the task marks it ``delivered``): no clock decides that, so a wall clock set a year forward
deletes no unread reply (before, a reply older than an hour by the wall clock could go). Unread replies keep
the newest ``MAX_UNREAD``. Both backends (a SQLite file, a PostgreSQL database)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from sentinel_mcp.a2a import assist_inbox
from sentinel_mcp.storage.row_signature import sign
from sentinel_mcp.a2a.assist_inbox import AssistInbox
from tests.cluster.conftest import pg_server, pg_url, store_location  # noqa: F401 - the backends' fixtures



def _stamp(at: datetime) -> str:
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _put(inbox: AssistInbox, rid: str, status: str, at: datetime, replied: datetime | None = None,
         channel: str | None = None) -> None:
    inbox._db.write_blocking(
        "INSERT INTO assist_requests "
        "(id, at, from_agent, reason, questions, status, reply, replied_at, channel) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (rid, _stamp(at), "peer", "why", "[]", status, "yes" if replied else None,
         _stamp(replied) if replied else None, channel),
    )
    if replied and inbox.shared:  # as a replica of the cluster signs a reply it took
        inbox._db.write_blocking("UPDATE assist_requests SET mac = ? WHERE id = ?", (
            sign(inbox.key, assist_inbox.PURPOSE, rid, "yes", _stamp(replied)), rid))


def _ids(inbox: AssistInbox) -> set[str]:
    return {r[0] for r in inbox._db.query_blocking("SELECT id FROM assist_requests", ())}


def test_only_the_newest_settled_requests_are_kept(store_location: str,  # noqa: F811
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    now = datetime.now(UTC)  # each test's own: a module's import time can be long past
    monkeypatch.setattr(assist_inbox, "MAX_SETTLED", 5)
    inbox = AssistInbox(store_location)
    try:
        # twelve a peer asked and canceled, a minute apart (s-00 the newest)
        for i in range(12):
            _put(inbox, f"s-{i:02d}", "canceled" if i % 2 else "expired", now - timedelta(minutes=i))
        _put(inbox, "open-old", "open", now - timedelta(days=400))  # still waiting: never pruned
        # answered long after it was asked: one just now (its requester has not read it), one read hours ago
        _put(inbox, "answered-now", "answered", now - timedelta(days=2), replied=now - timedelta(minutes=30))
        _put(inbox, "delivered-before", "delivered", now - timedelta(days=2),
             replied=now - timedelta(hours=3))
        new = inbox.add(from_agent="peer", reason="again", questions=["?"])
        kept = _ids(inbox)
        assert {new, "open-old", "answered-now"} <= kept, kept
        # the five newest by when they settled, and the reply of half an hour ago beyond them (not yet read)
        assert kept - {new, "open-old"} == {"answered-now", "s-00", "s-01", "s-02", "s-03", "s-04"}, kept
        assert inbox.get("answered-now")["reply"] == "yes"
        assert [r["id"] for r in inbox.open_requests()] == ["open-old", new]
    finally:
        inbox.release()


def test_a_reply_not_yet_read_outlives_the_count(store_location: str,  # noqa: F811
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A peer's ask-and-cancel loop after the person replied to another request: the reply stays for its
    requester's task to read, however many settle after it."""
    monkeypatch.setattr(assist_inbox, "MAX_SETTLED", 3)
    inbox = AssistInbox(store_location)
    try:
        asked = inbox.add(from_agent="friend", reason="help", questions=["?"])
        assert inbox.answer(asked, "here you are")
        for _ in range(8):
            inbox.close(inbox.add(from_agent="mallory", reason="noise", questions=[]), "canceled")
        inbox.add(from_agent="mallory", reason="noise", questions=[])
        assert (inbox.get(asked) or {}).get("reply") == "here you are"
        settled = inbox._db.query_blocking("SELECT count(*) FROM assist_requests WHERE status <> 'open'", ())
        assert int(settled[0][0]) <= 3 + 1, settled  # the bound, and the reply it spares
    finally:
        inbox.release()


def test_settled_requests_are_pruned_by_age_and_open_ones_never(store_location: str) -> None:  # noqa: F811
    now = datetime.now(UTC)  # each test's own: a module's import time can be long past
    inbox = AssistInbox(store_location)
    try:
        days = assist_inbox.SETTLED_KEEP_DAYS
        for rid, status, age in (
            ("ancient", "expired", days * 40),
            ("old", "canceled", days + 1),
            ("recent", "expired", days - 1),
            ("open-ancient", "open", days * 40),
        ):
            _put(inbox, rid, status, now - timedelta(days=age))
        asked = now - timedelta(days=days * 2)
        _put(inbox, "delivered-old", "delivered", asked, replied=now - timedelta(days=days + 1))
        _put(inbox, "delivered-late", "delivered", asked, replied=now - timedelta(days=1))
        # a bridged chat's reply went out on its chat as it was given: history like any delivered one
        _put(inbox, "bridged-old", "answered", asked, replied=now - timedelta(days=days + 1), channel="ch-1")
        # never read (its task's process ended first): no age takes it
        _put(inbox, "unread-old", "answered", asked, replied=now - timedelta(days=days * 3))
        new = inbox.add(from_agent="peer", reason="again", questions=[])
        assert _ids(inbox) == {new, "recent", "open-ancient", "delivered-late", "unread-old"}
    finally:
        inbox.release()


class _YearAhead(datetime):
    """The wall clock set a year forward (an operator's mistake, a bad time server)."""

    @classmethod
    def now(cls, tz=None):  # type: ignore[override]
        return datetime.now(tz) + timedelta(days=365)


def test_a_wall_clock_set_forward_deletes_no_unread_reply(store_location: str,  # noqa: F811
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    inbox = AssistInbox(store_location)
    try:
        asked = inbox.add(from_agent="friend", reason="help", questions=["?"])
        assert inbox.answer(asked, "here you are")
        read = inbox.add(from_agent="friend", reason="help", questions=["?"])
        assert inbox.answer(read, "read already")
        inbox.delivered(read)
        inbox.delivered(asked + "-nope")  # an unknown id: nothing
        monkeypatch.setattr(assist_inbox, "datetime", _YearAhead)
        inbox.add(from_agent="mallory", reason="noise", questions=[])
        assert (inbox.get(asked) or {}).get("reply") == "here you are"
        assert (inbox.get(asked) or {}).get("status") == "answered"
        assert inbox.get(read) is None  # read and sent back: history, old by the clock now
    finally:
        inbox.release()


def test_delivered_only_takes_an_answered_request(store_location: str) -> None:  # noqa: F811
    inbox = AssistInbox(store_location)
    try:
        waiting = inbox.add(from_agent="friend", reason="help", questions=["?"])
        inbox.delivered(waiting)  # no reply yet: still open, still answerable
        assert (inbox.get(waiting) or {}).get("status") == "open"
        assert inbox.answer(waiting, "now")
        inbox.delivered(waiting)
        row = inbox.get(waiting) or {}
        assert row.get("status") == "delivered" and row.get("reply") == "now"
        assert not inbox.answer(waiting, "again")  # a delivered request takes no other reply
        assert "already answered" in assist_inbox.settled_reason(row)
    finally:
        inbox.release()


def test_unread_replies_are_bounded_by_count(store_location: str,  # noqa: F811
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    now = datetime.now(UTC)
    monkeypatch.setattr(assist_inbox, "MAX_UNREAD", 3)
    inbox = AssistInbox(store_location)
    try:
        for i in range(6):
            _put(inbox, f"u-{i}", "answered", now - timedelta(days=1), replied=now - timedelta(minutes=i))
        inbox.add(from_agent="peer", reason="again", questions=[])
        assert {i for i in _ids(inbox) if i.startswith("u-")} == {"u-0", "u-1", "u-2"}
    finally:
        inbox.release()
