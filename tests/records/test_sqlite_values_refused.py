"""A value SQLite or its module cannot hold exactly (a lone surrogate, an int past 64 bits, a NaN SQLite would
keep as NULL), from a client, is a ``StatementError`` (a ``StorageError``: the statement's fault, not the
store's) on every path of the SQLite seam (``storage/sqlite.py``): reads, writes alone, grouped or inline,
consumes, blocking callers, as on PostgreSQL (``tests/cluster/test_pg_values_refused.py``). Never the module's
own exception past every caller's ``except StorageError``, the driver's cause kept (``__cause__``), the store
healthy and its writer thread answering. Text SQLite can hold (a NUL, very long text, an infinity) is stored
exactly. Then the stores that take client text fed such values: each refuses with a StorageError or answers
"none"."""

from __future__ import annotations

import asyncio
import itertools
import math
import sqlite3
from pathlib import Path

import pytest

from sentinel_mcp.a2a.shared_offers import SCHEMA as OFFERS, SharedOffers
from sentinel_mcp.a2a.protocol import Task, TaskStatus, now_iso
from sentinel_mcp.a2a.task_journal import TaskJournal
from sentinel_mcp.a2a.task_store import TaskRecord
from sentinel_mcp.core.decision import ToolCall
from sentinel_mcp.gateway.consents import ConsentBook
from sentinel_mcp.gateway.shared_asked_questions import SharedAskedQuestions
from sentinel_mcp.policy.confirmation_book import SharedConfirmationBook
from sentinel_mcp.storage import Schema, Statement, StorageError, open_database
from sentinel_mcp.storage.conversation_names import SharedLabels
from sentinel_mcp.storage.database import StatementError
from sentinel_mcp.storage.open import release

KV = Schema("kv", {"sqlite": ["CREATE TABLE kv (k TEXT PRIMARY KEY, n INTEGER, r REAL)"]})
BAD_TEXT = ["x\ud800y", "\udfff", "ok\x00\ud800", "\udc00\ud800"]
BAD_NUMBERS: list[object] = [2**63, -(2**63) - 1, 2**200, math.nan, -math.nan]
KEPT_TEXT = ["a\x00b", "\x00", "\U0010ffff\x00", "é" * 200_000, "'); DROP TABLE kv; --"]


async def _kv(path: Path):  # type: ignore[no-untyped-def]
    db = open_database(path, "kv")
    await db.migrate(KV)
    return db


def _refused(e: object, cause: type[BaseException] | tuple[type[BaseException], ...] = Exception) -> None:
    assert isinstance(e, StatementError), repr(e)
    text = str(e)
    assert "store" in text and "\ud800" not in text and "\udfff" not in text and "\x00" not in text
    assert isinstance(e.__cause__, cause), repr(e.__cause__)  # the driver's or codec's own error, kept


async def test_every_path_refuses_an_unstorable_value_as_a_storage_error(tmp_path: Path) -> None:
    db = await _kv(tmp_path / "kv.db")
    try:
        for bad in [*BAD_TEXT, *BAD_NUMBERS]:
            col = "k" if isinstance(bad, str) else "n"
            attempts = [
                db.query(f"SELECT k FROM kv WHERE {col} = ?", (bad,)),
                db.query_dicts(f"SELECT k FROM kv WHERE {col} = ?", (bad,)),
                db.write(f"INSERT INTO kv (k, {col}) VALUES ('w', ?)" if col == "n" else
                         "INSERT INTO kv (k) VALUES (?)", (bad,)),
                db.consume(f"DELETE FROM kv WHERE {col} = ? RETURNING k", (bad,)),
                db.run([Statement("INSERT INTO kv (k) VALUES (?)", ("fine",)),
                        Statement(f"UPDATE kv SET {col} = ? WHERE k = 'fine'", (bad,))]),
                db.run([Statement(f"UPDATE kv SET {col} = ? WHERE k = ?", [("x", "m1"), (bad, "m2")],
                                  many=True)]),
            ]
            for out in await asyncio.gather(*attempts, return_exceptions=True):
                _refused(out)
            for blocking in (lambda: db.query_blocking(f"SELECT k FROM kv WHERE {col} = ?", (bad,)),
                             lambda: db.write_blocking(f"UPDATE kv SET {col} = ?", (bad,)),
                             lambda: db.write_inline(
                                 lambda: [Statement(f"UPDATE kv SET {col} = ?", (bad,))])):
                with pytest.raises(StorageError) as got:
                    await asyncio.to_thread(blocking)
                _refused(got.value)
        assert (await db.query("SELECT count(*) FROM kv"))[0][0] == 0  # nothing of a refused job stays
        # one job's bad value in a shared commit fails that job alone; the others are written
        jobs = [db.write("INSERT INTO kv (k) VALUES (?)", (f"g{i}",)) for i in range(20)]
        jobs.insert(10, db.write("INSERT INTO kv (k) VALUES (?)", ("g\ud800",)))
        jobs.insert(5, db.write("INSERT INTO kv (k, r) VALUES (?, ?)", ("gnan", math.nan)))
        results = await asyncio.gather(*jobs, return_exceptions=True)
        assert [type(r) for r in results].count(StatementError) == 2, results
        assert (await db.query("SELECT count(*) FROM kv WHERE k LIKE 'g%'"))[0][0] == 20
        assert db.health.ok  # the statement's fault, not the store's
    finally:
        await release(db)


async def test_a_constraint_is_a_statement_error_carrying_sqlites_own(tmp_path: Path) -> None:
    db = await _kv(tmp_path / "kv.db")
    try:
        await db.write("INSERT INTO kv (k) VALUES ('a')")
        for out in await asyncio.gather(
            db.write("INSERT INTO kv (k) VALUES ('a')"),
            db.run([Statement("INSERT INTO kv (k) VALUES ('b')"),
                    Statement("INSERT INTO kv (k) VALUES ('a')")]),
            db.query("SELECT nope FROM kv"),
            return_exceptions=True,
        ):
            _refused(out, (sqlite3.IntegrityError, sqlite3.OperationalError))
        assert (await db.query("SELECT k FROM kv")) == [("a",)] and db.health.ok
    finally:
        await release(db)


async def test_what_sqlite_can_hold_is_kept_exactly(tmp_path: Path) -> None:
    db = await _kv(tmp_path / "kv.db")
    try:
        for i, text in enumerate(KEPT_TEXT):
            await db.write("INSERT INTO kv (k, n, r) VALUES (?, ?, ?)", (text, 2**63 - 1 - i, math.inf))
            got = await db.query("SELECT k, n, r FROM kv WHERE k = ?", (text,))
            assert got == [(text, 2**63 - 1 - i, math.inf)]
        assert (await db.query("SELECT count(*) FROM kv"))[0][0] == len(KEPT_TEXT)
    finally:
        await release(db)


def _task(task_id: str, owner: str, session: str, context: str = "c") -> TaskRecord:
    task = Task(id=task_id, context_id=context,
                status=TaskStatus(state="TASK_STATE_WORKING", timestamp=now_iso()))  # type: ignore[arg-type]
    return TaskRecord(task=task, owner=owner, session_id=session)


def _journal_rows(bad: str) -> list[tuple[str, str, str, str]]:
    """A task's id, owner, session and context, each in turn a client's value (ids unique per value)."""
    key = bad.encode("utf-8", "surrogatepass").hex()
    return [(bad, "alice", "alice/s", "c"), (f"o{key}", bad, "alice/s", "c"), (f"s{key}", "alice", bad, "c"),
            (f"c{key}", "alice", "s", bad)]


def _spellings(limit: int) -> list[str]:
    """Bounded: each bad piece at the start, middle and end of an ordinary value."""
    pieces = ["\x00", "\ud800", "\udc00\ud800", "\U0010ffff\x00"]
    out = [p + "x" if i == 0 else ("x" + p if i == 1 else "x" + p + "y")
           for p, i in itertools.product(pieces, range(3))]
    return out[:limit]


async def test_stores_fed_unstorable_client_text_refuse_or_find_nothing(tmp_path: Path) -> None:
    """Every store method here takes text a client chose (a task or context id, a label, a question key)."""
    journal = TaskJournal(tmp_path / "tasks.db", "r1")
    await journal.open()
    db = open_database(tmp_path / "misc.db", "misc")
    consents = ConsentBook(tmp_path / "consents.db", key=b"k" * 32)
    try:
        await db.migrate(OFFERS)
        offers = SharedOffers(db, 60.0, b"k" * 32)
        asked = await SharedAskedQuestions.open(db, 3600.0, 100, key=b"k" * 32)
        labels = await SharedLabels.open(db, 3600.0, key=b"k" * 32)
        confirmations = await SharedConfirmationBook.open(db, 600.0, key=b"k" * 32)
        calls = refused = 0
        for bad in _spellings(12):
            for attempt in (
                *(journal.commit(_task(*fields)) for fields in _journal_rows(bad)),
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
                except StorageError as e:
                    assert "\ud800" not in str(e) and "\x00" not in str(e)
                    refused += 1
                    continue
                assert out in (None, [], False) or isinstance(out, str), (bad, out)
        assert calls == 12 * 23
        for bad in _spellings(12):  # a passing state is queued, never raises (a refused write is logged)
            journal.save(_task(bad, "alice", "alice/s"))
        assert db.health.ok and journal.db.health.ok
        # what the journal took it keeps exactly: read back on reopening
        await journal.close()
        journal = TaskJournal(tmp_path / "tasks.db", "r1")
        kept = {(r.task.id, r.owner, r.session_id, r.task.context_id) for r in await journal.open()}
        assert kept and all(isinstance(v, str) for row in kept for v in row)
        assert kept <= {fields for bad in _spellings(12) for fields in _journal_rows(bad)}, kept
        assert len(kept) == 12 * 4 - 6 * 4  # all but the 6 spellings with a lone surrogate (4 rows each)
        # the stores answer ordinary text afterwards (no writer thread was lost)
        assert await offers.add("ctx-ok", "alice") is None or True
        assert await offers.principal_of("ctx-ok") == "alice"
        assert await labels.current("alice", "plain") is None
    finally:
        consents.close()
        await journal.close()
        await release(db)


def test_a_gateway_fed_such_values_answers_each_and_keeps_answering(tmp_path: Path) -> None:
    """Through a real gateway (stdio, its SQLite stores): calls whose arguments, ids and session carry a NUL,
    a number past 64 bits, a NaN or an infinity, very long text. Each is answered (a result or a JSON-RPC
    error), the gateway answers the ping after it, stays up, and audits every call it took."""
    import json

    from sentinel_mcp.config import load_config

    from .rig import audit_rows, kill_tree
    from .test_fuzz_fronts import _stdio_gateway

    spelt = [b'"a\\u0000b"', b"18446744073709551616", b"-1e999", b"NaN", b"Infinity", b"1e999",
             b'"' + b"x" * 300_000 + b'"', b'{"k\\u0000": NaN}', b"[340282366920938463463374607431768211457]"]
    proc = _stdio_gateway(tmp_path)
    assert proc.stdin is not None and proc.stdout is not None
    taken = 0
    try:
        for i, value in enumerate(spelt):
            call = (b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"rec__record",'
                    b'"arguments":{"reservation_id":%s,"extra":%s}}}' % (i, value, value))
            ping = json.dumps({"jsonrpc": "2.0", "id": f"p{i}", "method": "ping"}).encode()
            proc.stdin.write(call + b"\n" + ping + b"\n")
            proc.stdin.flush()
            frames = [json.loads(proc.stdout.readline()) for _ in range(2)]
            by_id = {f.get("id"): f for f in frames}
            answer = by_id.get(i) or by_id.get(None)  # refused at the door: a parse error has no id
            assert answer is not None and ("result" in answer or "error" in answer), frames
            assert "Traceback" not in json.dumps(answer) and "sqlite3" not in json.dumps(answer)
            taken += "result" in answer or answer.get("id") == i
            assert by_id[f"p{i}"]["result"] == {}, frames
        assert proc.poll() is None
        store = load_config(tmp_path / "config.json").store_path
        assert taken >= 3  # some got past the door (which refuses NaN and numbers past a float) to the stores
        assert len({r["decision_id"] for r in audit_rows(store)}) >= taken  # each call taken was recorded
    finally:
        kill_tree(proc)


async def test_facts_and_builds_fed_unstorable_values_refuse_or_keep_them(tmp_path: Path) -> None:
    """The fact store (sessions, fact texts, contexts a client's call names) and the swarm's builds (task ids,
    principals, states, counters): each method refuses with a StorageError, finds nothing, or keeps the value;
    a NaN never becomes a NULL (a fact's NULL expiry is "never expires")."""
    from sentinel_mcp.policy.fact_store import Fact, FactStore
    from sentinel_mcp.swarm.state import SwarmStore

    facts = await FactStore(tmp_path / "facts.db").open()
    swarm = await SwarmStore(tmp_path / "swarm.db").open()
    try:
        calls = 0
        for bad in _spellings(12):
            for attempt in (
                facts.valid(bad), facts.count(bad), facts.version(bad), facts.known_values(bad, [bad]),
                facts.delete(bad, [bad]), facts.contexts(bad), facts.bind_context(bad, bad, bad),
                facts.spend_confirmation(bad, bad, bad), facts.has_confirmation(bad, "t", bad),
                facts.taught_by(bad, bad, "d"), facts.delete_depending_on(bad, bad),
                facts.add([Fact(session=bad, predicate="p", args=[bad], fact=f"p({bad!r})",
                                provenance="user")]),
                swarm.get_task(bad), swarm.unfinished_of(bad), swarm.set_state(bad, "EXECUTING", error=bad),
                swarm.steps_of(bad), swarm.list_tasks(5, bad), swarm.started_since(bad, 0.0),
            ):
                calls += 1
                try:
                    await attempt
                except StorageError as e:
                    assert "\ud800" not in str(e) and "\x00" not in str(e)
        assert calls == 12 * 18
        for expiry in (math.nan, -math.nan):
            with pytest.raises(StorageError):
                await facts.add([Fact(session="s", predicate="p", args=[1], fact="p(1)", provenance="user",
                                      expires_at=expiry)])
        for big in (2**63, 2**200, math.nan):
            with pytest.raises(StorageError):
                await swarm.started_since("alice", big)  # type: ignore[arg-type]
        assert await facts.valid("s") == [] and facts.db.health.ok and swarm.db.health.ok
        await facts.add([Fact(session="s", predicate="p", args=[1], fact="p(1)", provenance="user")])
        assert [f.fact for f in await facts.valid("s")] == ["p(1)"]
    finally:
        await facts.close()
        await swarm.close()
