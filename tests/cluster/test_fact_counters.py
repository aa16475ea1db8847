"""A session's change counter on a shared (PostgreSQL) fact store: the row of a session that holds nothing any
more goes at the purge (a conversation per call left one behind forever), and a counter never comes back, so
a replica's mirror is never taken for current after its session's row went and came again."""

from __future__ import annotations

import time

import psycopg

from sentinel_mcp.policy import fact_store
from sentinel_mcp.policy.fact_schema import PG_SCHEMA
from sentinel_mcp.policy.fact_store import Fact, FactStore


def _fact(session: str, value: str, ttl: float = 60.0) -> Fact:
    return Fact(session=session, predicate="owns", args=["u1", value], fact=f"owns(u1,'{value}')",
                provenance="observed", expires_at=time.time() + ttl)


async def _rows(store: FactStore) -> dict[str, int]:
    return {s: v for s, v in await store.db.query("SELECT session, version FROM fact_sessions")}


async def test_the_counters_of_sessions_holding_nothing_go_and_the_others_stay(pg_url: str) -> None:
    store = await FactStore(pg_url).open()
    try:
        for i in range(30):  # conversations whose facts expired
            await store.add([_fact(f"gone{i}", "R-1", ttl=-1)])
        await store.add([_fact("live", "R-2")])
        await store.bind_context("focus", "res", "R-3")
        await store.add([_fact("emptied", "R-4")])
        await store.delete("emptied", ["owns(u1,'R-4')"])
        assert len(await _rows(store)) == 33
        assert await store.purge_expired() == 30
        assert set(await _rows(store)) == {"live", "focus"}
        assert await store.version("gone3") == 0 and await store.version("emptied") == 0
        assert await store.version("live") > 0 and await store.contexts("focus") == {"res": "R-3"}
    finally:
        await store.close()


async def test_a_session_changed_again_never_gets_back_a_counter(pg_url: str) -> None:
    store = await FactStore(pg_url).open()
    try:
        seen: list[int] = []
        for _ in range(4):  # the row goes and comes back each round
            await store.add([_fact("s", "R-1")])
            seen.append(await store.version("s"))
            await store.delete("s", ["owns(u1,'R-1')"])
            seen.append(await store.version("s"))
            await store.purge_expired()
            assert await store.version("s") == 0
        assert seen == sorted(seen) and len(set(seen)) == len(seen), seen
        # another session's counters come from the same sequence: no session's value is another's either
        await store.add([_fact("t", "R-1")])
        assert await store.version("t") > seen[-1]
    finally:
        await store.close()


async def test_a_change_between_finding_and_deleting_keeps_the_row(pg_url: str) -> None:
    """The purge finds the empty sessions, then deletes each only while its counter is the one found: a fact
    written in between (its change moved the counter) keeps the row and the fact's session current."""
    store = await FactStore(pg_url).open()
    try:
        await store.add([_fact("s", "R-1")])
        await store.delete("s", ["owns(u1,'R-1')"])
        found = await store.db.query(fact_store._EMPTY_SESSIONS, (100,))
        assert [r[0] for r in found] == ["s"]
        await store.add([_fact("s", "R-2")])  # a replica's change lands between the two statements
        now = await store.version("s")
        done = await store.db.run([fact_store.Statement(fact_store._FORGET_SESSION, [tuple(r) for r in found],
                                                        many=True)])
        assert done[0].rowcount == 0
        assert await store.version("s") == now and now != found[0][1]
    finally:
        await store.close()


async def test_a_replicas_own_change_is_told_from_anothers_by_the_counter_it_replaced(pg_url: str) -> None:
    a = await FactStore(pg_url).open()
    b = await FactStore(pg_url).open()
    try:
        await a.add([_fact("s", "R-1")])
        first, prev = a.versions["s"]
        assert prev == 0  # a new row
        await a.add([_fact("s", "R-2")])
        assert a.versions["s"] == (await a.version("s"), first)  # ours replaced the one ours had written
        await b.add([_fact("s", "R-3")])
        mid = await b.version("s")
        await a.add([_fact("s", "R-4")])
        assert a.versions["s"][1] == mid  # what a replica compares with the counter its mirror reflects
        spent, version = await a.spend_confirmation("s", "srv__pay", "d")
        assert (spent, version) == (0, None) and a.versions["s"][1] == mid  # nothing spent, nothing moved
    finally:
        await a.close()
        await b.close()


async def test_a_store_of_the_first_schema_moves_to_counters_that_never_come_back(pg_url: str) -> None:
    """A database written by the per-session counters (schema step 1) keeps its rows; every new counter is
    above every counter it had."""
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE storage_schema (store TEXT PRIMARY KEY, version INTEGER NOT NULL)")
        conn.execute(PG_SCHEMA)
        conn.execute("INSERT INTO storage_schema (store, version) VALUES ('facts', 1)")
        conn.execute("INSERT INTO fact_sessions (session, version) VALUES ('old', 41), ('other', 7)")
    store = await FactStore(pg_url).open()
    try:
        assert await store.version("old") == 41
        await store.add([_fact("other", "R-1")])
        await store.add([_fact("new", "R-1")])
        assert await store.version("other") > 41 and await store.version("new") > 41
        assert store.versions["other"][1] == 7
    finally:
        await store.close()
