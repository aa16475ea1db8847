"""The record of bridged chats (``chat_bridges``) is bounded: each new bridge prunes rows older than
``BRIDGE_KEEP_DAYS`` and all but the newest ``MAX_BRIDGES``. Before, every bridge ever opened stayed, so a
caller opening bridge after bridge grew the (shared) store without bound. Both backends (a SQLite file, a
PostgreSQL database)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from sentinel_mcp.a2a import assist_inbox
from sentinel_mcp.a2a.assist_inbox import AssistInbox
from tests.cluster.conftest import pg_server, pg_url, store_location  # noqa: F401 - the backends' fixtures


def _count(inbox: AssistInbox) -> int:
    return int(inbox._db.query_blocking("SELECT count(*) FROM chat_bridges", ())[0][0])


def test_only_the_newest_bridges_are_kept(store_location: str,  # noqa: F811
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(assist_inbox, "MAX_BRIDGES", 5)
    inbox = AssistInbox(store_location)
    try:
        for i in range(12):
            inbox.record_bridge(f"chan-{i:02d}", "mallory" if i % 2 else "person", "peer")
        assert _count(inbox) == 5
        kept = {b["channel"] for b in inbox.bridges()}
        assert kept == {f"chan-{i:02d}" for i in range(7, 12)}, kept
        inbox.bridge_relayed("chan-11")
        assert [b["relayed"] for b in inbox.bridges("mallory") if b["channel"] == "chan-11"] == [1]
    finally:
        inbox.release()


def test_old_bridges_are_pruned_by_age(store_location: str) -> None:  # noqa: F811
    inbox = AssistInbox(store_location)
    try:
        now = datetime.now(UTC)
        days = assist_inbox.BRIDGE_KEEP_DAYS
        ages = (("ancient", days * 40), ("old", days + 1), ("recent", days - 1))
        for channel, at in ((c, now - timedelta(days=d)) for c, d in ages):
            stamp = at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
            inbox._db.write_blocking("INSERT INTO chat_bridges (channel, owner, target, opened_at) "
                                     "VALUES (?, ?, ?, ?)", (channel, "person", "peer", stamp))
        inbox.record_bridge("fresh", "person", "peer")
        assert [b["channel"] for b in inbox.bridges()] == ["fresh", "recent"]
    finally:
        inbox.release()
