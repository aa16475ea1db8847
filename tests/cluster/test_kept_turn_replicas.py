"""Writes that establish a kept fact (``option(kept(...))``) take one turn across the replicas of a server
store (policy/kept_turns.py, storage/server_turn.py), not only within a process.

Two real replicas (``sentinel-mcp serve --http``) on one PostgreSQL, each with its own upstream process; one
user, two conversations, each through its own replica, racing the same "only once" write. The upstream holds
the first call until the test releases it, and the test releases it only once the second call either reached
an upstream (two runs: the hole) or waits for the cluster's turn (seen in ``pg_locks``): no sleeps. Before,
each replica decided on facts that did not yet show the other's write, and the write ran twice.

Then the holder is killed (``kill -9``) while the other replica waits: the server ends the dead replica's
session and its turn with it, and the waiting call goes on at once (no timeout has to pass first). What the
dead replica sent is unknown, so what it would have kept is kept as unsure: the waiting call is refused, as
every later one, until the operator clears it (``sentinel-mcp kept``)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, AsyncIterator

import httpx2
import psycopg
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from examples.cluster.recipe import ROOT, Cluster
from tests.records.rig import AUTH, TOKEN

pytestmark = pytest.mark.timeout(300)
SLOW = str(Path(__file__).with_name("slow_upstream.py"))
RULES = """
fact(worked/1).
option(kept(worked/1)).
guard('slow__work', [mark = M], require(\\+ worked(M), 'already worked')).
effect('slow__work', [mark = M], [establish(worked(M))]).
"""
# a waiter on an advisory lock: the cluster's turn is taken by one replica and awaited by another
WAITERS = ("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
           "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())")


def base_config(tmp: Path) -> dict[str, Any]:
    rules = tmp / "kept.pl"
    rules.write_text(RULES)
    upstream = {"command": sys.executable, "args": [SLOW], "env": {"SLOW_LOG": str(tmp / "work.log")},
                "timeout": 120}
    return {"mcpServers": {"slow": upstream},
            "sentinel": {"builtins": [], "http": {"token": TOKEN}, "rulebases": [str(rules)]}}


@pytest.fixture
async def cluster(pg_url: str) -> AsyncIterator[Cluster]:
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-kept-"))
    c = Cluster(tmp, base_config(tmp), store_url=pg_url)
    try:
        await asyncio.to_thread(c.up, AUTH)
        yield c
    finally:
        await asyncio.to_thread(c.down)


async def work(port: int, mark: str) -> Any:
    """One call of ``slow__work`` in a new conversation (an MCP session of its own) through one replica."""
    async with (
        httpx2.AsyncClient(timeout=120, headers=AUTH) as http,
        Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as c,
    ):
        return await c.call_tool("slow__work", {"mark": mark})


def starts(tmp: Path, mark: str) -> int:
    log = tmp / "work.log"
    return log.read_text().splitlines().count("start:" + mark) if log.exists() else 0


def waiters(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(WAITERS).fetchone()
        return int(row[0]) if row else 0


async def until(what: Any, why: str, *calls: "asyncio.Task[Any]") -> None:
    """Wait for a condition (polled: it lives in another process); bounded, and a call that ended early
    says how."""
    deadline = time.monotonic() + 60
    while not await asyncio.to_thread(what):
        for t in calls:
            if t.done():
                raise AssertionError(f"waiting for {why}: a call ended first: {t.result()}")
        assert time.monotonic() < deadline, f"never: {why}"
        await asyncio.sleep(0.05)


def text(r: Any) -> str:
    return " ".join(getattr(c, "text", "") for c in r.content)


async def test_one_kept_write_in_the_cluster_and_a_dead_holders_turn_is_released(cluster: Cluster) -> None:
    a, b = cluster.ports["replica-a"], cluster.ports["replica-b"]
    tmp, url = cluster.root, cluster.store_url or ""

    first = asyncio.create_task(work(a, "c1"))
    await until(lambda: starts(tmp, "c1") >= 1, "the first call reaching its upstream", first)
    second = asyncio.create_task(work(b, "c1"))
    # the second call either ran too (the hole), or waits for the turn the first one holds
    await until(lambda: starts(tmp, "c1") >= 2 or waiters(url) >= 1, "the second call", second)
    (tmp / "work.log.release-c1").write_text("")
    results = await asyncio.gather(first, second)
    assert starts(tmp, "c1") == 1, [text(r) for r in results]
    assert not results[0].is_error, text(results[0])
    assert results[1].is_error and "already worked" in text(results[1]), text(results[1])
    # and afterwards, through either replica, in new conversations
    for port in (a, b):
        r = await work(port, "c1")
        assert r.is_error and "already worked" in text(r), text(r)

    # the holder dies: its turn ends with its session, and the replica waiting for it goes on, at once
    held = asyncio.create_task(work(a, "c2"))
    await until(lambda: starts(tmp, "c2") >= 1, "the holder's call reaching its upstream", held)
    waiting = asyncio.create_task(work(b, "c2"))
    await until(lambda: waiters(url) >= 1, "the other replica waiting for the turn", waiting)
    os.kill(cluster.procs["replica-a"].pid, signal.SIGKILL)
    await asyncio.to_thread(cluster.procs["replica-a"].wait, 30)
    # what the dead replica sent is unknown: it is kept as unsure, so the same write is refused (it may have
    # run), in every conversation, until the operator clears it
    r = await asyncio.wait_for(waiting, 60)
    assert r.is_error and "already worked" in text(r), text(r)
    assert starts(tmp, "c2") == 1
    (tmp / "work.log.release-c2").write_text("")  # the dead replica's upstream may finish now
    with pytest.raises(BaseException):
        await asyncio.wait_for(held, 60)  # its replica is gone
    listed = kept(cluster, "list", "--json")
    facts = sorted(f["fact"] for f in json.loads(listed.stdout)["kept"])
    assert facts == ["'$unsure'(worked(c2))", "worked(c1)"], listed.stdout + listed.stderr
    cleared = kept(cluster, "clear", "'$unsure'(worked(c2))", "--reason", "checked: it never ran")
    assert cleared.returncode == 0, cleared.stderr
    r = await work(b, "c2")
    assert not r.is_error and starts(tmp, "c2") == 2, text(r)


def kept(cluster: Cluster, *args: str) -> subprocess.CompletedProcess[str]:
    """The operator's ``sentinel-mcp kept`` with a replica's config (its store and seal key)."""
    return subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cluster.config_path("replica-b")),
                           "kept", *args], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env=cluster.env)
