"""Shared single-use rows (a confirmation, a sealed state's nonce) are judged by the clock their expiry is on,
and so is this process's memory of the ones it used (``storage/spent_rows.py``).

1. On a SQLite store (one machine) a confirmation's expiry was set and compared by the wall clock: set back
   61 s (NTP stepping a fast clock, ``date -s``, a VM restored from a snapshot), the "yes" counted 61 s past
   its ttl; an hour, an hour. Now by the process clock.
2. On PostgreSQL the expiries are the database's, but the marks of used rows were forgotten by this
   replica's clock: a replica running 700 s ahead of the database forgot a used row at once (its 600 s
   expiry already "past"), and a copy of the row put back was a second "yes", a second open of a sealed
   retry. Now each mark is forgotten by the clock its row was judged on (the one the row came back with)."""

from __future__ import annotations

import time
from typing import Any, Iterator

import pytest

from sentinel_mcp.core import process_clock
from sentinel_mcp.gateway.stored_nonces import SCHEMA as NONCES, StoredNonceBook
from sentinel_mcp.policy.confirmation_book import SharedConfirmationBook
from sentinel_mcp.storage import open_database
from sentinel_mcp.storage.open import release
from tests.cluster.test_shared_confirmations import VERSION, pay
from tests.cluster.test_single_use_rows_put_back import COLS, put_back

_time, _mono = time.time, time.monotonic
TTL = 600.0


@pytest.fixture(autouse=True)
def fresh_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(process_clock, "CLOCK", process_clock.ProcessClock())
    yield
    monkeypatch.undo()


def set_back(monkeypatch: pytest.MonkeyPatch, *, wall_by: float, later_by: float) -> None:
    monkeypatch.setattr(time, "time", lambda: _time() - wall_by + later_by)
    monkeypatch.setattr(time, "monotonic", lambda: _mono() + later_by)


@pytest.mark.parametrize("wall_by", [61, 3600, 86400 * 365])
async def test_a_confirmation_on_sqlite_expires_by_the_process_clock(tmp_path, monkeypatch, wall_by):
    db = open_database(str(tmp_path / "store.db"), "confirmations")
    try:
        book = await SharedConfirmationBook.open(db, TTL)
        await book.grant(pay(), VERSION)
        assert await book.held(pay(), VERSION)
        set_back(monkeypatch, wall_by=wall_by, later_by=TTL + 1)
        assert not await book.held(pay(), VERSION)
        assert not await book.take(pay(), VERSION)
    finally:
        await release(db)


@pytest.mark.parametrize("wall_by", [61, 3600])
async def test_a_confirmation_on_sqlite_counts_within_its_ttl_whatever_the_clock(tmp_path, monkeypatch,
                                                                                 wall_by):
    db = open_database(str(tmp_path / "store.db"), "confirmations")
    try:
        book = await SharedConfirmationBook.open(db, TTL)
        await book.grant(pay(), VERSION)
        set_back(monkeypatch, wall_by=wall_by, later_by=TTL - 60)
        assert await book.take(pay(), VERSION)
    finally:
        await release(db)


@pytest.mark.parametrize("wall_by", [61, 3600])
async def test_a_nonce_on_sqlite_expires_by_the_process_clock(tmp_path, monkeypatch, wall_by):
    db = open_database(str(tmp_path / "store.db"), "nonces")
    try:
        await db.migrate(NONCES)
        book = StoredNonceBook(db)
        await book.issue_async("n-1", process_clock.now() + TTL)
        set_back(monkeypatch, wall_by=wall_by, later_by=TTL + 1)
        assert not await book.consume_async("n-1")
    finally:
        await release(db)


def _ahead(monkeypatch: pytest.MonkeyPatch, seconds: float) -> Any:
    """This replica's clocks ``seconds`` ahead of the database's: its wall clock, as a book is given it."""
    monkeypatch.setattr(time, "time", lambda: _time() + seconds)
    monkeypatch.setattr(process_clock, "CLOCK", process_clock.ProcessClock())
    return lambda: time.time()


@pytest.mark.parametrize("ahead", [0.0, 700.0])
async def test_a_confirmation_put_back_is_refused_by_a_replica_running_ahead(pg_url, monkeypatch, ahead):
    clock = _ahead(monkeypatch, ahead)
    db = open_database(pg_url, "confirmations")
    try:
        await SharedConfirmationBook.open(db, TTL)  # the table
        book = SharedConfirmationBook(db, TTL, clock=clock)
        await book.grant(pay(), VERSION)
        copied = await db.query(f"SELECT {COLS} FROM confirmations")
        assert await book.take(pay(), VERSION)
        await put_back(db, "confirmations", COLS, copied)
        assert not await book.take(pay(), VERSION)
    finally:
        await release(db)


@pytest.mark.parametrize("ahead", [0.0, 700.0])
async def test_a_nonce_put_back_is_refused_by_a_replica_running_ahead(pg_url, monkeypatch, ahead):
    clock = _ahead(monkeypatch, ahead)
    db = open_database(pg_url, "nonces")
    try:
        await db.migrate(NONCES)
        book = StoredNonceBook(db, clock=clock)
        await book.issue_async("n-1", process_clock.now() + TTL)
        copied: Any = await db.query("SELECT nonce, expires_at FROM nonces")
        assert await book.consume_async("n-1")
        await put_back(db, "nonces", "nonce, expires_at", copied)
        assert not await book.consume_async("n-1")
        await put_back(db, "nonces", "nonce, expires_at", copied)
        assert not book.consume("n-1")  # the blocking path alike
    finally:
        await release(db)
