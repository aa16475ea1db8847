"""The cluster's turn for kept writes (policy/kept_turns.py, storage/server_turn.py) refuses rather than lets
a call through: held by another replica past the wait, the call is denied and never reaches its upstream; a
server that cannot be reached gives no turn; a caller that gives up while waiting leaves no turn held behind
it. A real gateway on a real PostgreSQL (in this process), the other replica played by a connection holding
the same lock."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.decision import ToolCall
from sentinel_mcp.policy.kept_turns import KeptTurns
from tests.conftest import free_port
from sentinel_mcp.storage.location import server_location
from sentinel_mcp.storage.server_turn import TAKE, server_turn, turn_numbers
from tests.cluster.test_kept_turn_replicas import RULES, SLOW, starts, text
from tests.gateway.helpers import make_config

pytestmark = pytest.mark.timeout(120)
KEY = "cluster-test-seal-key-0123456789abcdef"
_HERE = " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
HELD = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted" + _HERE
WAITING = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted" + _HERE


def hold(conn: psycopg.Connection, url: str, name: str) -> None:
    """Take the cluster's turn ``name`` on ``conn``'s transaction, as another replica would."""
    (number,) = turn_numbers(conn, server_location(url).dsn, (name,))
    conn.execute(TAKE, (number,))


def count(url: str, sql: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(sql).fetchone()
        return int(row[0]) if row else 0


async def until(what: Any, why: str) -> None:
    deadline = time.monotonic() + 30
    while not await asyncio.to_thread(what):
        assert time.monotonic() < deadline, f"never: {why}"
        await asyncio.sleep(0.05)


async def test_a_kept_write_without_the_clusters_turn_is_denied(tmp_path: Path, pg_url: str) -> None:
    rules = tmp_path / "kept.pl"
    rules.write_text(RULES)
    (tmp_path / "work.log.release").write_text("")  # every call finishes at once
    upstream = {"command": sys.executable, "args": [SLOW], "env": {"SLOW_LOG": str(tmp_path / "work.log")}}
    cfg = make_config(tmp_path / "a", servers={"slow": upstream}, builtins=[], store=pg_url,
                      cluster={"replica": "replica-a", "seal_key": KEY}, rulebases=[str(rules)])
    async with running_gateway(cfg) as rt, Client(rt.front.server, mode="auto") as c:
        guard = rt.gateway.guard
        assert isinstance(guard, KeptTurns)
        writes = rt.gateway.session_writes.shared
        assert writes is not None
        writes.within = 0.3  # policy.write_turn_seconds: every turn's wait
        with psycopg.connect(pg_url) as other:  # another replica, holding the turn
            hold(other, pg_url, "sentinel.kept-facts")
            for _ in range(2):
                r = await c.call_tool("slow__work", {"mark": "c1"})
                assert r.is_error and "in progress on another replica" in text(r), text(r)
            assert starts(tmp_path, "c1") == 0
            other.rollback()
            # another replica's write to the same upstream (the cluster's turn of ``slow``): denied as well
            hold(other, pg_url, "sentinel.turn.server:slow")
            r = await c.call_tool("slow__work", {"mark": "c1"})
            assert r.is_error and "depends on is in progress on another replica" in text(r), text(r)
            assert starts(tmp_path, "c1") == 0
            other.rollback()
        r = await c.call_tool("slow__work", {"mark": "c1"})
        assert not r.is_error and starts(tmp_path, "c1") == 1, text(r)
        r = await c.call_tool("slow__work", {"mark": "c1"})
        assert r.is_error and "already worked" in text(r), text(r)
        assert count(pg_url, HELD) == 0  # given back after each call
        # a dead holder's pending write made up in SQL (no seal key): dropped, nothing kept as unsure from it
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("INSERT INTO kept_pending (session, tool, arguments, digest, started_at, mac) "
                         "VALUES ('owner/x', 'slow__work', '{\"mark\": \"c3\"}', 'd', 0, 'forged')")
        r = await c.call_tool("slow__work", {"mark": "c3"})
        assert not r.is_error and starts(tmp_path, "c3") == 1, text(r)
        assert sorted(f.fact for f in await guard.store.valid("$kept")) == ["worked(c1)", "worked(c3)"]
        assert count(pg_url, "SELECT count(*) FROM kept_pending") == 0

        # the store closed under the guard: no turn, no call
        database, guard.store._db = guard.store._db, None  # noqa: SLF001 - as a closed store
        try:
            call = ToolCall(name="slow__work", server="slow", tool="work", arguments={"mark": "x"},
                            session_id="owner/s")
            async with guard.kept_turn(call, wait=True) as refused:
                assert refused is not None and "not open" in refused
        finally:
            guard.store._db = database  # noqa: SLF001
        # a kept write about to leave without the cluster's turn held for it (no gateway path does): denied
        assert "not held for this call" in (await guard.forwarding(call) or "")
        async with guard.kept_turn(call, wait=True) as refused:  # nor inside a kept turn alone
            assert refused is not None and "not held for this call" in refused


async def test_no_server_no_turn(pg_url: str) -> None:
    gone = server_location(f"postgresql://postgres@127.0.0.1:{free_port()}/nothing")
    async with server_turn(gone, "t", wait=1.0) as refused:
        assert refused is not None and not refused.busy and "could not give the turn" in refused.why
    async with server_turn(server_location(pg_url), "t", wait=0) as mine:
        assert mine is None
        async with server_turn(server_location(pg_url), "t", wait=0) as theirs:  # tried once: taken
            assert theirs is not None and theirs.busy
        async with server_turn(server_location(pg_url), "t", wait=0.2) as theirs:  # waited, then refused
            assert theirs is not None and theirs.busy and "more than 0.2 s" in theirs.why
        # several names: all or none (the ones taken before the busy one are given back with it)
        for wait in (0, 0.2):
            async with server_turn(server_location(pg_url), ("s", "t"), wait=wait) as theirs:
                assert theirs is not None and theirs.busy
            assert count(pg_url, HELD) == 1  # "t", still ours
    async with server_turn(server_location(pg_url), ("s", "t"), wait=0.2) as both:
        assert both is None and count(pg_url, HELD) == 2
    # the idle connections kept for the next turns ended under them (the server restarted): taken afresh
    assert count(pg_url, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = "
                         "current_database() AND pid <> pg_backend_pid()") >= 1
    async with server_turn(server_location(pg_url), ("s", "t"), wait=0) as again:
        assert again is None and count(pg_url, HELD) == 2
    assert count(pg_url, HELD) == 0


async def test_a_caller_that_gives_up_waiting_leaves_no_turn_held(pg_url: str) -> None:
    location = server_location(pg_url)

    async def wait_for_it() -> None:
        async with server_turn(location, "t", wait=20.0):
            raise AssertionError("the body of a cancelled taker never runs")

    with psycopg.connect(pg_url) as holder:
        hold(holder, pg_url, "t")
        taker = asyncio.create_task(wait_for_it())
        await until(lambda: count(pg_url, WAITING) == 1, "the taker waiting")
        taker.cancel()
        with pytest.raises(asyncio.CancelledError):
            await taker
        holder.rollback()  # the taker's thread gets the turn now, and gives it back at once
    await until(lambda: count(pg_url, HELD) == 0 and count(pg_url, WAITING) == 0, "the turn given back")
    async with server_turn(location, "t", wait=0) as mine:
        assert mine is None
