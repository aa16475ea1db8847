"""A shared single-use row (a confirmation, a sealed state's nonce) copied by a database writer before its use
and put back after it is refused by the replica that used it (``storage/spent_rows.py``), signed or not: a
"yes" counts once, a sealed retry opens once. Real SQLite and real PostgreSQL, the writer's SQL as written.
A new grant for the same call still counts (its signature is another)."""

from __future__ import annotations

import time
from typing import Any

from sentinel_mcp.gateway.stored_nonces import SCHEMA as NONCES, StoredNonceBook
from sentinel_mcp.policy.confirmation_book import SharedConfirmationBook
from sentinel_mcp.storage import open_database
from sentinel_mcp.storage.open import release
from sentinel_mcp.storage.spent_rows import SpentRows
from tests.cluster.test_shared_confirmations import VERSION, pay

COLS = "session, tool, digest, version, principal, mac, expires_at"


async def put_back(db: Any, table: str, cols: str, rows: list[tuple[Any, ...]]) -> None:
    for row in rows:
        await db.write(f"INSERT INTO {table} ({cols}) VALUES ({', '.join('?' * len(row))})", row)


async def test_a_confirmation_put_back_after_its_use_is_no_second_yes(store_location: str) -> None:
    db = open_database(store_location, "confirmations")
    try:
        book = await SharedConfirmationBook.open(db, 60)
        other = SharedConfirmationBook(db, 60)  # another replica on the same store
        await book.grant(pay(), VERSION)
        copied = await db.query(f"SELECT {COLS} FROM confirmations")
        assert len(copied) == 1
        assert await book.take(pay(), VERSION)
        await put_back(db, "confirmations", COLS, copied)
        assert not await book.take(pay(), VERSION)  # the replica that used it: refused
        await db.write("DELETE FROM confirmations")
        await put_back(db, "confirmations", COLS, copied)
        # what this cannot cover: another replica that never used it (docs/cluster.md)
        assert await other.take(pay(), VERSION)
        await put_back(db, "confirmations", COLS, copied)
        assert not await other.take(pay(), VERSION) and not await book.take(pay(), VERSION)
        time.sleep(0.01)  # a new grant (another expiry, so another signature) counts
        await book.grant(pay(), VERSION)
        assert await book.take(pay(), VERSION)
    finally:
        await release(db)


async def test_a_nonce_put_back_after_its_use_opens_nothing(store_location: str) -> None:
    db = open_database(store_location, "nonces")
    try:
        await db.migrate(NONCES)
        book = StoredNonceBook(db)
        await book.issue_async("n-1", time.time() + 60)
        copied = await db.query("SELECT nonce, expires_at FROM nonces")
        assert await book.consume_async("n-1")
        await put_back(db, "nonces", "nonce, expires_at", copied)
        assert not await book.consume_async("n-1")
        await put_back(db, "nonces", "nonce, expires_at", copied)
        assert not book.consume("n-1")  # the blocking path alike
        await book.issue_async("n-2", time.time() + 60)
        assert await book.consume_async("n-2")
    finally:
        await release(db)


def test_spent_marks_are_bounded_and_expire() -> None:
    spent = SpentRows(most=3)
    assert spent.spend("a", 110, 100.0) and not spent.spend("a", 110, 100.0)
    for bad in ((7, 110, 100.0), ("b", True, 100.0), ("b", "110", 100.0), ("b", 110, None),
                ("b", 110, True), ("b", 110, "100")):
        assert not spent.spend(*bad), bad
    assert not spent.spend("a", 200, 50.0)  # a reading behind one seen forgets nothing
    # "a" expired by the clock it was judged on: its row grants nothing anyway, the mark goes
    assert spent.spend("a", 200, 111.0)
    for mark in ("b", "c", "d"):
        assert spent.spend(mark, 200, 111.0)
    assert spent.spend("a", 200, 111.0)  # the earliest used gave way past the bound (said in the log)
