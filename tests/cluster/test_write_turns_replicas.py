"""Replicas of a server store share the write turns (gateway/session_writes.py, policy/write_turns.py,
storage/server_turn.py), not only the kept facts' turn; and a kept write's pending row (policy/kept_turns.py)
exists only once its call is about to leave, never while it is still being decided or asked about.

Three real replicas (``sentinel-mcp serve --http``) on one PostgreSQL, each with its own upstream process
(their state shared through the upstream's log, as one upstream's store). No sleeps: the upstream holds a call
until the test releases it, and the test waits on what it can see (the upstream's log, ``pg_locks``).

- Two conversations of one user, through two replicas, race one write whose guard reads the upstream's state
  (``done``: a finished ``work``; two retail conversations modifying one order's items). Before, each replica
  took only its own process's turn: both were decided before either finished, and the write ran twice. Now
  the second waits for the first (seen waiting in ``pg_locks``) and is decided on what it left: denied.
- A replica killed while its kept write is still being decided (its guard's read held): nothing was sent, so
  nothing is unsure afterwards. Before, the pending row was written before the decision, and the dead
  replica's call was recorded as unsure: the same write was refused everywhere until the operator cleared it.
- A replica killed while the user is being asked about a kept write: the turn is not held while the user
  answers (the question goes between rounds), and nothing is unsure afterwards either."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterator

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ElicitResult

from examples.cluster.recipe import Cluster
from tests.cluster.test_kept_turn_replicas import SLOW, kept, starts, text, until, waiters
from tests.records.rig import AUTH, TOKEN

pytestmark = pytest.mark.timeout(300)
RULES = """
fact(did/1).
fact(worked/1).
option(kept(worked/1)).
binding(done(M, D), tool('slow__done', [mark = M]), extract([D = '/done']), [fresh_for_writes]).
binding(peeked(M, S), tool('slow__peek', [mark = M]), extract([S = '/seen']), [fresh_for_writes]).
guard('slow__work', [mark = M], require(done(M, no), 'already worked')).
effect('slow__work', [mark = M], [establish(did(M))]).
guard('slow__keep', [mark = M], (require(peeked(M, no), 'seen'), require(\\+ worked(M), 'already kept'),
                                 confirmed('Keep ~w?', [M]))).
effect('slow__keep', [mark = M], [establish(worked(M))]).
"""


@pytest.fixture(scope="module")
def cluster(pg_server: Any) -> Iterator[Cluster]:
    import psycopg

    tmp = Path(tempfile.mkdtemp(prefix="sentinel-turns-"))
    url = pg_server.url.rsplit("/", 1)[0] + "/write_turns"
    with psycopg.connect(pg_server.url, autocommit=True) as conn:
        conn.execute("CREATE DATABASE write_turns")
    (tmp / "turns.pl").write_text(RULES)
    upstream = {"command": sys.executable, "args": [SLOW], "env": {"SLOW_LOG": str(tmp / "work.log")},
                "timeout": 120}
    base = {"mcpServers": {"slow": upstream},
            "sentinel": {"builtins": [], "http": {"token": TOKEN}, "rulebases": [str(tmp / "turns.pl")]}}
    c = Cluster(tmp, base, replicas=3, store_url=url)
    try:
        c.up(AUTH)
        yield c
    finally:
        c.down()


async def call(port: int, tool: str, mark: str, asked: asyncio.Event | None = None) -> Any:
    """One call in a new conversation through one replica; the user approves what is asked, or (``asked``)
    says so and never answers."""
    async def answer(ctx: Any, params: Any) -> ElicitResult:
        if asked is not None:
            asked.set()
            await asyncio.Event().wait()
        schema = str(getattr(params, "requested_schema", ""))  # the policy's confirmation or the default's
        return ElicitResult(action="accept", content={"approve" if "approve" in schema else "answer": True})

    async with (
        httpx2.AsyncClient(timeout=120, headers=AUTH) as http,
        Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http), mode="legacy",
               elicitation_callback=answer) as c,
    ):
        return await c.call_tool(f"slow__{tool}", {"mark": mark})


def logged(tmp: Path, line: str) -> bool:
    log = tmp / "work.log"
    return log.exists() and line in log.read_text().splitlines()


async def kill(cluster: Cluster, name: str) -> None:
    os.kill(cluster.procs[name].pid, signal.SIGKILL)
    await asyncio.to_thread(cluster.procs[name].wait, 30)


def kept_facts(cluster: Cluster) -> list[str]:
    listed = kept(cluster, "list", "--json")
    return sorted(f["fact"] for f in json.loads(listed.stdout)["kept"])


async def test_one_write_per_upstream_in_the_cluster(cluster: Cluster) -> None:
    a, b = cluster.ports["replica-a"], cluster.ports["replica-b"]
    tmp, url = cluster.root, cluster.store_url or ""
    first = asyncio.create_task(call(a, "work", "o1"))
    await until(lambda: starts(tmp, "o1") >= 1, "the first write reaching its upstream", first)
    second = asyncio.create_task(call(b, "work", "o1"))
    # the second either ran too (the hole), or waits for the turn the first one holds
    await until(lambda: starts(tmp, "o1") >= 2 or waiters(url) >= 1, "the second write", second)
    (tmp / "work.log.release-o1").write_text("")
    results = await asyncio.gather(first, second)
    assert starts(tmp, "o1") == 1, [text(r) for r in results]
    assert not results[0].is_error, text(results[0])
    assert results[1].is_error and "already worked" in text(results[1]), text(results[1])


async def test_a_replica_killed_while_asking_leaves_nothing_unsure(cluster: Cluster) -> None:
    b, c = cluster.ports["replica-b"], cluster.ports["replica-c"]
    (cluster.root / "work.log.release-q1").write_text("")  # its guard's read answers at once
    asked = asyncio.Event()
    pending = asyncio.create_task(call(c, "keep", "q1", asked))
    await asyncio.wait_for(asked.wait(), 60)
    await kill(cluster, "replica-c")
    with pytest.raises(BaseException):
        await asyncio.wait_for(pending, 60)
    assert "'$unsure'(worked(q1))" not in kept_facts(cluster)
    r = await call(b, "keep", "q1")
    assert not r.is_error and logged(cluster.root, "keep:q1"), text(r)


async def test_a_replica_killed_while_deciding_leaves_nothing_unsure(cluster: Cluster) -> None:
    a, b, tmp = cluster.ports["replica-a"], cluster.ports["replica-b"], cluster.root
    deciding = asyncio.create_task(call(a, "keep", "d1"))
    await until(lambda: logged(tmp, "peek:d1"), "the decision's read reaching the upstream", deciding)
    await kill(cluster, "replica-a")
    with pytest.raises(BaseException):
        await asyncio.wait_for(deciding, 60)
    (tmp / "work.log.release-d1").write_text("")
    # nothing was sent: the same write is decided afresh, and runs
    r = await call(b, "keep", "d1")
    assert not r.is_error and logged(tmp, "keep:d1"), text(r)
    assert kept_facts(cluster) == ["worked(d1)", "worked(q1)"]
