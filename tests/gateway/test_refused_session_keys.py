"""A request whose session keys are refused leaves nothing behind: no conversation in the registry, no
label's row in the shared store (replicas), no cached label.

``session_key.named_conversation`` resolved the ``_meta`` key (a label opens its conversation; with replicas
the label's row is written) and then the header's, and only then compared them: every refused pair of fresh
labels (or a label and a malformed or forged key) left one or two conversations in the registry (pushing
others' out of its 20,000) and, with replicas, up to two rows in the shared database. Now both keys are
checked and what they name compared (``Conversations.identify``: no conversation opened, nothing written)
before the one used is resolved. Real ``Conversations`` and a real SQLite store for the shared labels.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.gateway.conversations import SESSION_HEADER, Conversations, SessionRefused
from sentinel_mcp.gateway.session_key import named_conversation
from sentinel_mcp.identity.principal import OWNER, Principal
from sentinel_mcp.storage import open_database
from sentinel_mcp.storage.conversation_names import SCHEMA, SharedLabels
from sentinel_mcp.storage.open import release

ROUNDS = 40
BOB = Principal("bob", "token")


def refused_pairs(conversations: Conversations, i: int, sealed_work: str, sealed_bobs: str) -> list[Any]:
    """(``_meta`` key, header) pairs naming different conversations, or one of them no conversation of the
    caller's: fresh labels each round, so a pair that left a conversation behind grows the registry."""
    return [
        (f"m{i}", f"h{i}"), (f"m{i}", "bad key!"), (f"m{i}", "sentinel2.forged"), (f"m{i}", "x" * 65),
        (f"m{i}", f"owner/conv-{i:016x}"), (f"m{i}", sealed_bobs), (f"m{i}", sealed_work),
        ("bad key!", f"h{i}"), ("sentinel2.forged", f"h{i}"), (sealed_bobs, f"h{i}"), (sealed_work, f"h{i}"),
        (f"owner/conv-{i:016x}", f"h{i}"), (f"M{i}", f"m{i}"), (f"m{i}.", f"m{i}"),
    ]


async def named(conversations: Conversations, meta_key: str, header: str) -> Any:
    meta, headers = {"sentinel/session": meta_key}, {SESSION_HEADER: header}
    return await named_conversation(conversations, meta, headers, OWNER)


async def _check(conversations: Conversations, rows: Any) -> None:
    work = await conversations.resolve("work", OWNER)
    sealed_work = conversations.sealed(work)
    sealed_bobs = conversations.sealed(await conversations.resolve("bobs", BOB))
    before = (len(conversations._by_id), len(conversations._sealed), await rows())
    for i in range(ROUNDS):
        for meta_key, header in refused_pairs(conversations, i, sealed_work, sealed_bobs):
            with pytest.raises(SessionRefused):
                await named(conversations, meta_key, header)
    assert (len(conversations._by_id), len(conversations._sealed), await rows()) == before
    # the keys that agree still name their one conversation
    agreeing = [("work", "work"), ("work", " work "), (sealed_work, "work"), ("work", sealed_work)]
    for meta_key, header in agreeing:
        got = await named(conversations, meta_key, header)
        assert got is not None and got.id == work.id, (meta_key, header)
    fresh = await named(conversations, "new", "new")
    assert fresh is not None and fresh.id != work.id


async def test_refused_keys_leave_no_conversation() -> None:
    async def rows() -> int:
        return 0

    await _check(Conversations(), rows)


async def test_refused_keys_leave_no_shared_label_row(tmp_path: Path) -> None:
    db = open_database(tmp_path / "labels.db", "labels")
    try:
        conversations = Conversations()
        conversations.labels = await SharedLabels.open(db, conversations.idle)
        labels = conversations.labels

        async def rows() -> tuple[int, int]:
            found = await db.query("SELECT count(*) FROM conversation_labels")
            return int(found[0][0]), len(labels._known)

        await _check(conversations, rows)
    finally:
        await release(db)


async def test_a_label_whose_shared_row_went_idle_is_another_conversation(tmp_path: Path) -> None:
    """With replicas, a sealed id and the label it was issued for agree only while the label's row still names
    that conversation: idle past its time to live, the label names a fresh one, so the pair is refused (as
    before), and nothing is written for it."""
    db = open_database(tmp_path / "labels.db", "labels")
    try:
        conversations = Conversations()
        conversations.labels = SharedLabels(db, conversations.idle, refresh=0)
        await db.migrate(SCHEMA)
        trip = await conversations.resolve("trip", OWNER)
        sealed = conversations.sealed(trip)
        await db.write("UPDATE conversation_labels SET used_at = used_at - ?", (conversations.idle + 60,))
        before = await db.query("SELECT session, used_at FROM conversation_labels")
        with pytest.raises(SessionRefused):
            await named(conversations, sealed, "trip")
        assert await db.query("SELECT session, used_at FROM conversation_labels") == before
    finally:
        await release(db)
