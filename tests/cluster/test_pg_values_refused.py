"""A value PostgreSQL cannot hold (a NUL character, a lone surrogate, a number out of range), from a client,
is a ``StorageError`` (a ``StatementError``: the statement's, not the store's fault) on every path of the
seam (``storage/postgres.py``): reads from the pool, writes alone or in a shared commit, consumes, blocking
callers.
Never the driver's own exception (a traceback past every caller's ``except StorageError``), and the store
stays healthy. Then the stores that take client text (task journal, offers, asked questions, conversation
labels), fed such values: each refuses with a StorageError or answers "none", never raises anything else."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from sentinel_mcp.a2a.shared_offers import SCHEMA as OFFERS, SharedOffers
from sentinel_mcp.a2a.task_journal import TaskJournal
from sentinel_mcp.core.decision import ToolCall
from sentinel_mcp.gateway.consents import ConsentBook
from sentinel_mcp.gateway.shared_asked_questions import SharedAskedQuestions
from sentinel_mcp.policy.confirmation_book import SharedConfirmationBook
from sentinel_mcp.storage import Schema, Statement, StorageError, open_database
from sentinel_mcp.storage.conversation_names import SharedLabels
from sentinel_mcp.storage.database import StatementError
from sentinel_mcp.storage.open import release

KV = Schema("kv", {"postgres": ["CREATE TABLE kv (k TEXT PRIMARY KEY, n BIGINT, i INTEGER)"],
                   "sqlite": ["CREATE TABLE kv (k TEXT PRIMARY KEY, n INTEGER, i INTEGER)"]})
BAD_TEXT = ["a\x00b", "\x00", "x\ud800y", "\udfff", "ok\x00\ud800"]
BAD_NUMBERS = [2**63, -(2**63) - 1, 2**200]


async def _kv(url: str):  # type: ignore[no-untyped-def]
    db = open_database(url, "kv")
    await db.migrate(KV)
    return db


def _refused(e: BaseException) -> None:
    assert isinstance(e, StatementError), repr(e)
    assert "store" in str(e) and "\ud800" not in str(e) and "\x00" not in str(e)


async def test_every_path_refuses_an_unstorable_value_as_a_storage_error(pg_url: str) -> None:
    db = await _kv(pg_url)
    try:
        for bad in BAD_TEXT:
            attempts = [
                db.query("SELECT k FROM kv WHERE k = ?", (bad,)),
                db.query_dicts("SELECT k FROM kv WHERE k = ?", (bad,)),
                db.write("INSERT INTO kv (k) VALUES (?)", (bad,)),
                db.consume("DELETE FROM kv WHERE k = ? RETURNING k", (bad,)),
                db.run([Statement("INSERT INTO kv (k) VALUES (?)", ("fine",)),
                        Statement("INSERT INTO kv (k) VALUES (?)", (bad,))]),
                db.run([Statement("INSERT INTO kv (k) VALUES (?)", [("m1",), (bad,)], many=True)]),
            ]
            for out in await asyncio.gather(*attempts, return_exceptions=True):
                _refused(out)  # type: ignore[arg-type]
            for blocking in (lambda: db.query_blocking("SELECT k FROM kv WHERE k = ?", (bad,)),
                             lambda: db.write_blocking("INSERT INTO kv (k) VALUES (?)", (bad,))):
                with pytest.raises(StorageError) as got:
                    await asyncio.to_thread(blocking)
                _refused(got.value)
        for big in BAD_NUMBERS:
            for out in await asyncio.gather(
                db.write("INSERT INTO kv (k, n) VALUES (?, ?)", ("big", big)),
                db.write("INSERT INTO kv (k, i) VALUES (?, ?)", ("int", big)),
                db.query("SELECT k FROM kv LIMIT ?", (big,)),
                return_exceptions=True,
            ):
                _refused(out)  # type: ignore[arg-type]
        # one job's bad value in a shared commit fails that job alone; the others are written
        jobs = [db.write("INSERT INTO kv (k) VALUES (?)", (f"g{i}",)) for i in range(20)]
        jobs.insert(10, db.write("INSERT INTO kv (k) VALUES (?)", ("g\x00",)))
        results = await asyncio.gather(*jobs, return_exceptions=True)
        assert [type(r) for r in results].count(StatementError) == 1
        assert (await db.query("SELECT count(*) FROM kv WHERE k LIKE 'g%'"))[0][0] == 20
        assert (await db.query("SELECT count(*) FROM kv WHERE k = 'fine'"))[0][0] == 0  # its job rolled back
        assert db.health.ok  # the statement's fault, not the store's
    finally:
        await release(db)


def _spellings(limit: int) -> list[str]:
    """Bounded: each bad piece at the start, middle and end of an ordinary value."""
    pieces = ["\x00", "\ud800", "\udc00\ud800", "\U0010ffff\x00"]
    out = [p + "x" if i == 0 else ("x" + p if i == 1 else "x" + p + "y")
           for p, i in itertools.product(pieces, range(3))]
    return out[:limit]


async def test_stores_fed_unstorable_client_text_refuse_or_find_nothing(pg_url: str) -> None:
    """Every store method here takes text a client chose (a task or context id, a label, a question key)."""
    journal = TaskJournal(pg_url, "r1")
    await journal.open()
    db = open_database(pg_url, "misc")
    try:
        await db.migrate(OFFERS)
        offers = SharedOffers(db, 60.0, b"k" * 32)
        asked = await SharedAskedQuestions.open(db, 3600.0, 100, key=b"k" * 32)
        labels = await SharedLabels.open(db, 3600.0, key=b"k" * 32)
        confirmations = await SharedConfirmationBook.open(db, 600.0, key=b"k" * 32)
        consents = ConsentBook(pg_url, key=b"k" * 32)
        calls = 0
        for bad in _spellings(12):
            for attempt in (
                journal.read(bad, "alice"), journal.read("t1", bad), journal.owned(bad, 10),
                journal.waiting(bad, 10), journal.ask_cancel(bad, "alice"),
                offers.principal_of(bad), offers.add(bad, "alice"), offers.add("ctx", bad),
                asked.get("alice", bad, "q"), asked.get(bad, "s", "q"), asked.forget("alice", "s", bad),
                labels.current("alice", bad), labels.session(bad, "trip"),
                *(book(ToolCall(name=f"s__{tool}", server="s", tool=tool, session_id=session, principal=who),
                       "v1")
                  for book in (confirmations.take, confirmations.held, confirmations.grant)
                  for tool, session, who in ((bad, "a/s", "alice"), ("t", bad, "alice"), ("t", "s", bad))),
                asyncio.to_thread(consents.current, bad, "data", "care"),
                asyncio.to_thread(consents.list, bad),
            ):
                calls += 1
                try:
                    out = await attempt
                except StorageError:
                    continue
                assert out in (None, [], False) or isinstance(out, str), (bad, out)
        assert calls == 12 * 24
        assert db.health.ok and journal.db.health.ok
    finally:
        consents.close()
        await journal.close()
        await release(db)
