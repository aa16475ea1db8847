"""The shared ``confirmations`` table holds at most ``per_principal`` confirmations of one principal, on both
backends and across replicas (processes) granting at once.

Attack: a principal grants confirmations it never uses (another conversation, tool, argument or policy
version each time) and fills the table every replica shares. Its own oldest give way; another principal's
confirmation, granted before, is still used; the principal's newest grant is always kept."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from sentinel_mcp.core.decision import ToolCall
from sentinel_mcp.policy.confirmation_book import SharedConfirmationBook
from sentinel_mcp.storage import open_database
from sentinel_mcp.storage.open import release
from tests.cluster.race_worker import GRANT_CAP
from tests.cluster.test_single_use_across_replicas import ROUNDS, race

VERSION = "default:fail-safe"
CAP = 20


def call(principal: str, session: str = "s1", tool: str = "pay", n: int = 1) -> ToolCall:
    return ToolCall(
        name=f"srv__{tool}",
        server="srv",
        tool=tool,
        arguments={"n": n},
        session_id=f"{principal}/{session}",
        principal=principal,
    )


# what changes from one unused grant to the next: each is a row of its own
SPELLINGS = {
    "sessions": lambda i: (call("mallory", session=f"s{i}"), VERSION),
    "tools": lambda i: (call("mallory", tool=f"t{i}"), VERSION),
    "arguments": lambda i: (call("mallory", n=i), VERSION),
    "versions": lambda i: (call("mallory"), f"v{i}"),
}


async def held(db: Any, principal: str) -> int:
    rows = await db.query("SELECT count(*) FROM confirmations WHERE principal = ?", (principal,))
    return int(rows[0][0])


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
async def test_one_principal_cannot_fill_the_shared_confirmations(store_location: str, spelling: str) -> None:
    db = open_database(store_location, "confirmations")
    try:
        await SharedConfirmationBook.open(db, 300)
        book = SharedConfirmationBook(db, 300, per_principal=CAP)
        other = SharedConfirmationBook(db, 300, per_principal=CAP)  # another replica on the same store
        await book.grant(call("alice"), VERSION)
        grants = [SPELLINGS[spelling](i) for i in range(CAP * 5)]
        for c, version in grants:
            await (book if hash(version + c.session_id + c.name + c.digest) % 2 else other).grant(c, version)
        assert (await db.query("SELECT count(*) FROM confirmations"))[0][0] == CAP + 1
        assert await held(db, "mallory") == CAP
        assert await other.take(call("alice"), VERSION)  # another principal's is untouched
        newest, version = grants[-1]
        assert await other.take(newest, version)  # the newest grant is kept, the oldest gave way
        oldest, version = grants[0]
        assert not await book.take(oldest, version)
    finally:
        await release(db)


async def test_replicas_granting_at_once_never_exceed_the_cap(pg_url: str) -> None:
    db = open_database(pg_url, "confirmations")
    try:
        await SharedConfirmationBook.open(db, 300)
        await SharedConfirmationBook(db, 300).grant(call("alice"), VERSION)
        keys = [f"k{i}" for i in range(ROUNDS)]
        granted = await asyncio.to_thread(race, pg_url, "confirmation-grant", keys)  # three processes at once
        assert sum(len(g) for g in granted) == 3 * ROUNDS
        assert await held(db, "mallory") == GRANT_CAP
        assert await held(db, "alice") == 1
    finally:
        await release(db)
