"""PostgreSQL crashes under a real replica (``sentinel-mcp serve --http``) while 4 clients call through it:
calls
are refused with a clear reason while it is down, ``/healthz`` says ``degraded``, no call reached the upstream
without its decision on record, every answered call has its outcome, and the replica serves again by itself
once the server is back (no restart)."""

from __future__ import annotations

import asyncio
import json
import re
import tempfile
import time
import urllib.request
from pathlib import Path

import httpx2
import psycopg
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from examples.cluster.recipe import Cluster, wait_ok
from sentinel_mcp.gateway.call_record import META_KEY
from tests.cluster.test_replicas import base_config
from tests.records.rig import AUTH, executed

CLIENTS = 4
CALLS = 8  # per client and phase: bounded by count


async def calls(port: int, marks: list[str], pause: float = 0.0) -> list[tuple[str, bool, str, str | None]]:
    """(mark, refused, text, decision id) of each call, one client session, one call after the other."""
    out = []
    async with (
        httpx2.AsyncClient(timeout=30, headers=AUTH) as http,
        Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as c,
    ):
        for m in marks:
            r = await c.call_tool("rec__do", {"mark": m})
            out.append((m, r.is_error, r.content[0].text if r.content else "", (r.meta or {}).get(META_KEY)))
            await asyncio.sleep(pause)
    return out


def status(port: int) -> str:
    req = urllib.request.Request(f"http://127.0.0.1:{port}/healthz", headers=AUTH)
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return str(json.loads(r.read())["status"])
    except urllib.error.HTTPError as e:
        return str(json.loads(e.read())["status"])


async def test_postgres_crash_under_load_denies_records_and_recovers_by_itself() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-outage-"))
    cluster = Cluster(tmp, base_config(tmp))  # its own PostgreSQL: this test stops it
    try:
        url = await asyncio.to_thread(cluster.start_database)
        port = cluster.start_replica("replica-a")
        await asyncio.to_thread(wait_ok, port, 60.0, cluster.procs["replica-a"], AUTH)
        server = cluster.server
        assert server is not None

        # load, and the server crashes in the middle of it
        load = asyncio.gather(
            *(calls(port, [f"c{c}-{i}" for i in range(CALLS)], pause=0.05) for c in range(CLIENTS))
        )
        for _ in range(300):  # the crash lands once calls are flowing (bounded wait)
            if len(executed(tmp)) >= CLIENTS:
                break
            await asyncio.sleep(0.05)
        await asyncio.to_thread(server.stop, "immediate")
        during = [r for rs in await load for r in rs]
        down = [
            r
            for rs in await asyncio.gather(
                *(calls(port, [f"d{c}-{i}" for i in range(3)]) for c in range(CLIENTS))
            )
            for r in rs
        ]
        assert all(refused for _, refused, _, _ in down), down  # nothing served without a record
        # the first refusal says the call could not be recorded, the next ones that records cannot be written
        assert all(re.search("could not record|cannot write its records", t) for _, _, t, _ in down), down
        assert status(port) == "degraded"

        await asyncio.to_thread(server.start)
        deadline = time.monotonic() + 30
        while status(port) != "ok":  # back by itself: the next write reconnects
            assert time.monotonic() < deadline, "the replica did not recover"
            await asyncio.sleep(0.2)
        # the very first call once it is back is served: connections opened before the restart (the read
        # pool's, the writer's) are dead, and the store runs a statement that failed on one before anything
        # was committed once more on a fresh connection (tests/cluster/test_first_call_after_restart.py)
        first = (await calls(port, ["w0"]))[0]
        assert not first[1], first
        after = [
            r
            for rs in await asyncio.gather(
                *(calls(port, [f"a{c}-{i}" for i in range(3)]) for c in range(CLIENTS))
            )
            for r in rs
        ]
        assert not any(refused for _, refused, _, _ in after), [r for r in after if r[1]]

        with psycopg.connect(url) as conn:
            audit = conn.execute("SELECT decision_id, event, outcome, arguments FROM audit").fetchall()
        decided = {json.loads(a)["mark"] for _, e, _, a in audit if e == "decision" and a}
        finished = {d for d, e, o, _ in audit if e == "outcome" and o == "ok"}
        ran = set(executed(tmp))
        assert ran <= decided  # no call reached the upstream without its decision on record
        answered = [r for r in during + after if not r[1]]
        assert {d for *_, d in answered} <= finished  # every answered call has its outcome on record
        assert not ran & {m for m, *_ in down}  # refused while down: never forwarded
        assert {m for m, *_ in after} <= ran
        served_during = sum(1 for r in during if not r[1])
        assert 0 < served_during < len(during), during  # the crash did land in the middle of the load
    finally:
        await asyncio.to_thread(cluster.down)


Outcome = tuple[str, bool, str, "str | None"]


async def tolerant_calls(port: int, marks: list[str], pause: float = 0.0) -> list[Outcome]:
    """``calls`` through the balancer: a call haproxy refuses (no replica in rotation: HTTP 503) is refused
    too; the client starts a new session for the next one."""
    out: list[Outcome] = []
    pending = list(marks)
    for _ in range(len(marks)):  # bounded: every round settles at least one call
        if not pending:
            break
        try:
            out += await calls(port, pending, pause)
            pending = []
        except Exception as e:  # noqa: BLE001 - the balancer's own refusal ends that session
            out.append((pending.pop(0), True, f"balancer: {type(e).__name__}", None))
    return out


async def test_postgres_crash_under_load_through_the_balancer_denies_and_recovers() -> None:
    """Two replicas behind haproxy, 4 clients through the balancer, PostgreSQL crashes and comes back: while
    it is down every call is refused (by a replica, saying it cannot record it, or by haproxy once both
    replicas are out of rotation as degraded), none reaches the upstream without its decision on record,
    and once it is back both replicas return to rotation and serve through the balancer by themselves."""
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-outage-lb-"))
    cluster = Cluster(tmp, base_config(tmp))  # its own PostgreSQL: this test stops it
    try:
        await asyncio.to_thread(cluster.up, AUTH)
        port, server, url = cluster.port, cluster.server, cluster.store_url
        assert server is not None and url is not None
        load = asyncio.gather(
            *(tolerant_calls(port, [f"c{c}-{i}" for i in range(CALLS)], pause=0.05) for c in range(CLIENTS))
        )
        for _ in range(300):  # the crash lands once calls are flowing (bounded wait)
            if len(executed(tmp)) >= CLIENTS:
                break
            await asyncio.sleep(0.05)
        await asyncio.to_thread(server.stop, "immediate")
        during = [r for rs in await load for r in rs]
        down = [
            r
            for rs in await asyncio.gather(
                *(tolerant_calls(port, [f"d{c}-{i}" for i in range(3)]) for c in range(CLIENTS))
            )
            for r in rs
        ]
        assert all(refused for _, refused, _, _ in down), down
        reasons = "could not record|cannot write its records|balancer"
        assert all(re.search(reasons, t) for _, _, t, _ in down), down
        for name in ("replica-a", "replica-b"):
            assert status(cluster.ports[name]) == "degraded"

        await asyncio.to_thread(server.start)
        deadline = time.monotonic() + 60
        while not all(status(p) == "ok" for p in cluster.ports.values()):  # back by themselves
            assert time.monotonic() < deadline, "the replicas did not recover"
            await asyncio.sleep(0.2)
        after: list[Outcome] = []
        for attempt in range(20):  # bounded: haproxy puts a replica back after two good checks (1 s apart)
            after = [r for rs in await asyncio.gather(
                *(tolerant_calls(port, [f"a{attempt}-{c}-{i}" for i in range(3)]) for c in range(CLIENTS))
            ) for r in rs]
            if not any(refused for _, refused, _, _ in after):
                break
            await asyncio.sleep(0.5)
        assert not any(refused for _, refused, _, _ in after), [r for r in after if r[1]]

        with psycopg.connect(url) as conn:
            audit = conn.execute("SELECT decision_id, event, outcome, arguments, chain FROM audit").fetchall()
        decided = {json.loads(a)["mark"] for _, e, _, a, _ in audit if e == "decision" and a}
        finished = {d for d, e, o, _, _ in audit if e == "outcome" and o == "ok"}
        ran = set(executed(tmp))
        assert ran <= decided  # no call reached the upstream without its decision on record
        answered = [r for r in during + after if not r[1]]
        assert {d for *_, d in answered} <= finished  # every answered call has its outcome on record
        assert not ran & {m for m, *_ in down}  # refused while down: never forwarded
        assert {m for m, *_ in after} <= ran
        assert {c for *_, c in audit} == {"replica-a", "replica-b"}  # both replicas served
        assert 0 < sum(1 for r in during if not r[1]) < len(during), during  # the crash landed mid-load
    finally:
        await asyncio.to_thread(cluster.down)
