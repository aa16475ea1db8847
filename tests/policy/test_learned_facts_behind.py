"""Facts a tool's result taught are written behind the call (``FactStore.learn``, ``learning_buffer.py``):
nobody waits for their commit, many calls' share one, and the store stays exact: a read of the session waits
for them, a later write is never undone by them, closing writes them, a failed write is reported and
loses nothing else."""

from __future__ import annotations

import asyncio
import logging
import random
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.policy import learning_buffer
from sentinel_mcp.policy.fact_store import Fact, FactStore

pytestmark = pytest.mark.timeout(60)


def _fact(session: str, key: str, value: str = "v", ttl: float | None = 300) -> Fact:
    now = time.time()
    return Fact(session=session, predicate="seat", args=[key, value], fact=f"seat('{key}', '{value}')",
                provenance="observed", source_tool="airline__get", source_digest="d", established_at=now,
                expires_at=None if ttl is None else now + ttl)


def _on_disk(path: Path, session: str | None = None) -> set[str]:
    """The facts another process reading the file sees now."""
    with sqlite3.connect(path) as conn:
        sql, args = "SELECT fact FROM facts", ()
        if session is not None:
            sql, args = sql + " WHERE session = ?", (session,)
        return {r[0] for r in conn.execute(sql, args)}


async def test_the_caller_does_not_wait_and_a_read_of_the_session_does(tmp_path: Path) -> None:
    path = tmp_path / "facts.db"
    async with FactStore(path) as store:
        jobs = store.db.committed_jobs  # type: ignore[attr-defined]
        await store.learn([_fact("s1", "A"), _fact("s1", "B")])
        assert _on_disk(path) == set()  # held: nothing queued yet
        got = {f.fact for f in await store.valid("s1")}  # the read queues them and waits for the commit
        assert got == {"seat('A', 'v')", "seat('B', 'v')"}
        assert _on_disk(path, "s1") == got
        assert store.db.committed_jobs == jobs + 1  # type: ignore[attr-defined]


async def test_many_calls_learning_share_one_commit(tmp_path: Path) -> None:
    path = tmp_path / "facts.db"
    async with FactStore(path) as store:
        jobs = store.db.committed_jobs  # type: ignore[attr-defined]
        for i in range(40):
            await store.learn([_fact(f"conv-{i}", "A"), _fact(f"conv-{i}", "B", ttl=None)])
        await asyncio.sleep(learning_buffer.WINDOW * 5)
        for _ in range(500):  # the window passed: queued by its timer, committed by the writer
            if store.db.committed_jobs > jobs:  # type: ignore[attr-defined]
                break
            await asyncio.sleep(0.01)
        with sqlite3.connect(path) as conn:
            assert conn.execute("SELECT COUNT(*) FROM facts").fetchone() == (80,)
        assert await store.count() == 80
        assert store.db.committed_jobs == jobs + 1  # type: ignore[attr-defined]


async def test_a_later_write_is_never_undone_by_an_earlier_learning(tmp_path: Path) -> None:
    async with FactStore(tmp_path / "facts.db") as store:
        await store.learn([_fact("s1", "A", ttl=None), _fact("s1", "B", ttl=None)])
        await store.delete("s1", ["seat('A', 'v')"])  # the rule's invalidation after the read
        await store.learn([_fact("s2", "A")])
        await store.purge_expired(now=time.time() + 10_000)  # s2's fact expired by then
        assert {f.fact for f in await store.valid("s1")} == {"seat('B', 'v')"}
        assert await store.valid("s2", now=0) == []


async def test_writes_and_learnings_in_any_order_end_as_if_each_waited(tmp_path: Path) -> None:
    """A random program of learnings, adds and deletes over a few facts of a few sessions: what is stored at
    the end is what the same program stores when every step is committed before the next."""
    rnd = random.Random(21)
    for round_ in range(8):
        steps = []
        for _ in range(60):
            kind = rnd.choice(["learn", "learn", "add", "delete"])
            steps.append((kind, rnd.choice(["s1", "s2"]), rnd.choice("ABC"), rnd.choice(["v", "w"])))
        results = []
        for behind in (True, False):
            async with FactStore(tmp_path / f"{round_}-{behind}.db") as store:
                for kind, session, key, value in steps:
                    fact = _fact(session, key, value)
                    if kind == "learn" and behind:
                        await store.learn([fact])
                    elif kind in ("learn", "add"):
                        await store.add([fact])
                    else:
                        await store.delete(session, [fact.fact])
                    if rnd.random() < 0.1:
                        await asyncio.sleep(learning_buffer.WINDOW * rnd.random() * 2)
                results.append({s: sorted(f.fact for f in await store.valid(s)) for s in ("s1", "s2")})
        assert results[0] == results[1], steps


async def test_closing_writes_what_was_learned(tmp_path: Path) -> None:
    path = tmp_path / "facts.db"
    store = await FactStore(path).open()
    await store.learn([_fact("s1", "A")])
    await store.close()
    assert _on_disk(path) == {"seat('A', 'v')"}
    async with FactStore(path) as again:
        assert [f.fact for f in await again.valid("s1")] == ["seat('A', 'v')"]


async def test_past_the_bound_the_learning_call_waits_for_its_commit(tmp_path: Path) -> None:
    path = tmp_path / "facts.db"
    async with FactStore(path) as store:
        many = [_fact("s1", f"K{i}") for i in range(learning_buffer.MAX_ROWS)]
        await store.learn(many)
        assert len(_on_disk(path, "s1")) == learning_buffer.MAX_ROWS  # committed before learn returned


async def test_a_failed_learned_write_is_reported_and_the_store_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with FactStore(tmp_path / "facts.db") as store:
        real = store.db.submit_write

        def failing(statements):  # type: ignore[no-untyped-def]
            fut = asyncio.get_running_loop().create_future()
            fut.set_exception(sqlite3.OperationalError("disk I/O error"))
            return fut

        store.db.submit_write = failing  # type: ignore[method-assign]
        with caplog.at_level(logging.WARNING, logger="sentinel_mcp.policy.learning_buffer"):
            await store.learn([_fact("s1", "A")])
            assert await store.valid("s1") == []  # missing (fetched again when needed), no error raised
        assert "were not stored" in caplog.text and "disk I/O error" in caplog.text
        store.db.submit_write = real  # type: ignore[method-assign]
        await store.learn([_fact("s1", "B")])
        assert [f.fact for f in await store.valid("s1")] == ["seat('B', 'v')"]


async def test_a_closed_store_reports_what_it_could_not_write(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = await FactStore(tmp_path / "facts.db").open()
    await store.learn([_fact("s1", "A")])
    db = store.db
    store._db = None  # closed underneath the held rows (as a stop that skipped ``close`` would)
    with caplog.at_level(logging.WARNING, logger="sentinel_mcp.policy.learning_buffer"):
        await asyncio.sleep(learning_buffer.WINDOW * 3)  # the timer fires with no database to write to
    assert "were not stored" in caplog.text
    store._db = db
    await store.close()


async def test_past_the_writes_in_flight_a_learning_waits_for_its_own(tmp_path: Path) -> None:
    """A disk that stalls: the writes queued and not committed are bounded; the next learning waits."""
    async with FactStore(tmp_path / "facts.db") as store:
        loop = asyncio.get_running_loop()
        held: list[asyncio.Future[Any]] = []

        def stalled(statements):  # type: ignore[no-untyped-def]
            held.append(loop.create_future())
            return held[-1]

        real = store.db.submit_write
        store.db.submit_write = stalled  # type: ignore[method-assign]
        for i in range(learning_buffer.MAX_WRITES):
            await store.learn([_fact(f"s{i}", "A")])
            store._learning.flush()  # as the window's timer would
        assert len(held) == learning_buffer.MAX_WRITES
        late = asyncio.ensure_future(store.learn([_fact("late", "A")]))
        await asyncio.sleep(learning_buffer.WINDOW * 3)
        assert not late.done()  # waiting for its own commit
        for f in held:
            f.set_result([])
        await asyncio.wait_for(late, 5)
        store.db.submit_write = real  # type: ignore[method-assign]


async def test_a_fact_learned_again_in_the_window_keeps_its_newest_row(tmp_path: Path) -> None:
    async with FactStore(tmp_path / "facts.db") as store:
        first = _fact("s1", "A", ttl=100)
        again = _fact("s1", "A", ttl=500).model_copy(update={"source_digest": "newer"})
        await store.learn([first, _fact("s1", "B")])
        await store.learn([again])
        [a] = [f for f in await store.valid("s1") if f.fact == first.fact]
        assert (a.expires_at, a.source_digest) == (again.expires_at, "newer")
        assert await store.db.query("SELECT COUNT(*) FROM facts") == [(2,)]
        assert await store.db.query(  # the value rows of A once each
            "SELECT value, COUNT(*) FROM fact_values WHERE fact = ? GROUP BY value ORDER BY value",
            (first.fact,)) == [("A", 1), ("v", 1)]


async def test_hostile_texts_in_one_call_do_not_cost_other_calls_their_shared_commit(tmp_path: Path) -> None:
    """Learned facts of many calls share one commit: a result's texts (NUL, lone surrogates, quotes, huge)
    must not fail it for the others, and come back exactly."""
    texts = ["nul\x00byte", "lone \ud800", "'); DROP TABLE facts; --", "\U0001f600", "x" * 100_000, ""]
    async with FactStore(tmp_path / "facts.db") as store:
        jobs = store.db.committed_jobs  # type: ignore[attr-defined]
        hostile = [_fact("\ud83d evil", "K", t).model_copy(update={"args": ["K", t, {"deep": [t]}]})
                   for t in texts]
        await store.learn(hostile)
        await store.learn([_fact("s-good", "A")])
        assert [f.fact for f in await store.valid("s-good")] == ["seat('A', 'v')"]
        got = await store.valid("\ud83d evil")
        assert sorted(f.args[1] for f in got) == sorted(texts)
        assert store.db.committed_jobs == jobs + 1  # type: ignore[attr-defined]
