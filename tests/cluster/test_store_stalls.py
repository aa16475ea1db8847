"""PostgreSQL that stalls (a table locked by an operator's session or a stuck client, a statement that
does not end) fails closed within a bound: a statement past ``STATEMENT_TIMEOUT`` is cancelled by the
server, the call is refused with the cause and the store shows degraded. Before, the replica's one writer
thread waited on the lock for as long as it was held, and every call of that replica waited behind it (no
answer, no refusal)."""

from __future__ import annotations

import asyncio

import psycopg
import pytest

from sentinel_mcp.core.decision import ToolCall
from sentinel_mcp.policy.confirmation_book import SharedConfirmationBook
from sentinel_mcp.storage import StorageError, open_database, postgres
from sentinel_mcp.storage.open import release

HANG = 30  # a bound on the test (the store's own bound is one second here), not a measurement


def pay(n: int = 1) -> ToolCall:
    return ToolCall(name="srv__pay", server="srv", tool="pay", arguments={"n": n}, session_id="alice/x")


async def test_a_write_stuck_behind_a_lock_is_refused_not_left_waiting(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postgres, "STATEMENT_TIMEOUT", 1.0)
    db = open_database(pg_url, "stall")
    try:
        book = await SharedConfirmationBook.open(db, 60)
        await book.grant(pay(2), "v")
        with psycopg.connect(pg_url) as other:  # another session holds the table (its transaction open)
            other.execute("LOCK TABLE confirmations IN ACCESS EXCLUSIVE MODE")
            with pytest.raises(StorageError):
                await asyncio.wait_for(book.grant(pay(), "v"), HANG)
            assert not await asyncio.wait_for(book.take(pay(2), "v"), HANG)  # fail closed: not used
            assert not await asyncio.wait_for(book.held(pay(2), "v"), HANG)
        assert await asyncio.wait_for(book.take(pay(2), "v"), HANG)  # the lock gone: served again, once
        await book.grant(pay(), "v")
    finally:
        await release(db)
