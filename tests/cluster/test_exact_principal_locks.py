"""A principal's own lock on a server store is exactly that principal's: the default guard's confirmations
(``policy/confirmation_book.py``: a grant trims the principal's oldest under it) and the swarm's builds
(``swarm/state.py``: the one-unfinished-build and per-hour checks). They were advisory locks keyed by an
unkeyed 64-bit hash of the principal's name: two principals whose names collide waited for each other's grants
and submits (and a name colliding with another one-key lock, a migration's, waited for that). Here the hash is
forced to collide in the database itself (as ``test_exact_turns.py`` does), one principal's grant is held open
in a transaction of the test's, and another principal's grant must go through meanwhile, while the same
principal's next one waits for it (event order, no timing)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Callable, Sequence

import psycopg

from sentinel_mcp.core.decision import ToolCall
from sentinel_mcp.policy.confirmation_book import SharedConfirmationBook
from sentinel_mcp.storage import Statement, open_database
from sentinel_mcp.storage.open import release
from sentinel_mcp.storage.database import WriteResult
from sentinel_mcp.storage.location import server_location
from sentinel_mcp.storage.postgres import PostgresDatabase, translate
from sentinel_mcp.swarm.state import SwarmStore

# every principal's lock name hashes alike: with hashed locks, all of them are one lock
EVERYONE_COLLIDES = """
CREATE FUNCTION public.hashtextextended(t text, seed bigint) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
  SELECT 7::bigint $$
"""


def collide(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(EVERYONE_COLLIDES)
        name = conn.execute("SELECT current_database()").fetchone()[0]  # type: ignore[index]
        conn.execute(f'ALTER DATABASE "{name}" SET search_path = public, pg_catalog')


class Held:
    """A database whose ``run`` executes its statements in a transaction of the test's, left open until
    ``release`` (whatever the store runs to hold its principal's lock is held that long)."""

    def __init__(self, db: Any, url: str) -> None:
        self._db, self._conn = db, psycopg.connect(url)
        self.ran = asyncio.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)

    async def run(self, statements: Sequence[Statement]) -> list[WriteResult]:
        out = []
        for s in statements:
            for params in (s.params if s.many else [s.params]):
                cur = self._conn.execute(translate(s.sql), tuple(params))  # type: ignore[arg-type]
                out.append(WriteResult(cur.rowcount, None, cur.fetchall() if cur.description else []))
        self.ran.set()
        return out

    def release(self) -> None:
        if not self._conn.closed:
            self._conn.commit()
            self._conn.close()


async def _while_held(
    url: str, hold: Callable[[Any], Any], other: Callable[[Any], Any], same: Callable[[Any], Any]
) -> None:
    """``hold`` runs in a held transaction; ``other`` (another principal) must finish before it is released,
    ``same`` (the same principal) only after."""
    collide(url)
    # as three replicas: each its own database (one writer thread each; a write waiting for a lock holds its
    # replica's writer, so two writes through one would wait for each other whatever the locks)
    dbs = [PostgresDatabase(server_location(url), name).start() for name in ("held", "other", "same")]
    try:
        held = Held(dbs[0], url)
        try:
            await _raced(dbs[1], dbs[2], held, hold, other, same)
        finally:
            held.release()
    finally:
        for db in dbs:
            await db.close()


async def _raced(other_db: Any, same_db: Any, held: Held, hold: Callable[[Any], Any],
                 other: Callable[[Any], Any], same: Callable[[Any], Any]) -> None:
    await hold(held)
    assert held.ran.is_set()
    order: list[str] = []

    async def tagged(name: str, job: Callable[[Any], Any], db: Any) -> None:
        await job(db)
        order.append(name)

    same_task = asyncio.create_task(tagged("same", same, same_db))
    other_task = asyncio.create_task(tagged("other", other, other_db))
    done, _ = await asyncio.wait({other_task}, timeout=60)
    assert other_task in done, "another principal's write waited for the held principal's lock"
    other_task.result()
    for _ in range(20):  # the same principal's write had every chance to pass meanwhile: it must not
        await asyncio.sleep(0.01)
    assert order == ["other"], order
    held.release()
    await asyncio.wait_for(same_task, 60)
    assert order == ["other", "same"]


def _call(principal: str, n: int) -> ToolCall:
    return ToolCall(name="fs__delete_file", server="fs", tool="delete_file", arguments={"path": f"/tmp/{n}"},
                    session_id=f"s-{principal}", principal=principal)


async def test_confirmation_grants_of_principals_whose_lock_names_collide_do_not_wait(pg_url: str) -> None:
    key = b"k" * 32
    db = open_database(pg_url, "migrate")
    await SharedConfirmationBook.open(db, 300, key=key)
    await release(db)

    await _while_held(
        pg_url,
        lambda d: SharedConfirmationBook(d, 300, key=key).grant(_call("alice", 1), "v1"),
        lambda d: SharedConfirmationBook(d, 300, key=key).grant(_call("bob", 2), "v1"),
        lambda d: SharedConfirmationBook(d, 300, key=key).grant(_call("alice", 3), "v1"),
    )


async def test_build_submits_of_principals_whose_lock_names_collide_do_not_wait(
    pg_url: str, tmp_path: Path
) -> None:
    store = await SwarmStore(pg_url, key=b"k" * 32).open()
    await store.close()

    def submit(principal: str, n: int) -> Callable[[Any], Any]:
        async def go(d: Any) -> None:
            s = SwarmStore(pg_url, key=b"k" * 32)
            s._db = d
            tid = f"t20261205-0600{n:02d}-a1a1a1"
            await s.create_task(tid, {"app_name": "Notes"}, tmp_path / tid, principal=principal,
                                lease=("replica-a", "replica-a/x", 60.0), per_hour=10)
        return go

    await _while_held(pg_url, submit("alice", 1), submit("bob", 2), submit("alice", 3))
