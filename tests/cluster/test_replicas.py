"""Real replicas: two ``sentinel-mcp serve --http`` processes on one PostgreSQL, haproxy in front, 8 clients.
Calls go through both replicas into one audit record (a chain per replica); ``sentinel-mcp audit verify``
checks the cluster and finds a tampered row; a ``kill -9`` of one replica under load leaves no executed call
without its decision row and no answered call without its outcome, and the clients go on through the other."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx2
import psycopg
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from examples.cluster.recipe import Cluster, wait_ok
from sentinel_mcp.gateway.call_record import META_KEY
from sentinel_mcp.paths import RULEBASES_DIR
from tests.records.rig import AUTH, RECORDER, ROOT, TOKEN, executed

CLIENTS = 8
CALLS = 6  # per client and phase: bounded by count


def base_config(tmp: Path) -> dict[str, Any]:
    return {
        "mcpServers": {
            "rec": {
                "command": sys.executable,
                "args": [RECORDER],
                "env": {"RECORDER_LOG": str(tmp / "executed.log")},
                "timeout": 20,
            }
        },
        "sentinel": {
            "builtins": [],
            "http": {"token": TOKEN},
            "rulebases": [str(RULEBASES_DIR / "default.pl")],
        },
    }


async def client_calls(port: int, marks: list[str], *, tolerate: bool = False) -> dict[str, str]:
    """One client (its own MCP session) making calls one after the other; with ``tolerate``, a call that fails
    (its replica was killed) is left out, and the client starts a new session for the rest."""
    done: dict[str, str] = {}
    pending = list(marks)
    for _attempt in range(3):
        try:
            async with (
                httpx2.AsyncClient(timeout=10 if tolerate else 30, headers=AUTH) as http,
                Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as c,
            ):
                while pending:
                    m = pending[0]
                    r = await c.call_tool("rec__do", {"mark": m})
                    pending.pop(0)
                    assert not r.is_error and r.content[0].text == "done:" + m, r.content[0].text
                    done[m] = r.meta[META_KEY]
            return done
        except Exception:  # noqa: BLE001 - the replica died under this session
            if not tolerate:
                raise
            pending.pop(0) if pending else None  # that call's fate is unknown to the client: not counted
    return done


def cli(cluster: Cluster, replica: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cluster.config_path(replica)), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=cluster.env,
    )


def rows(url: str, sql: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        return conn.execute(sql).fetchall()


async def test_two_replicas_behind_haproxy_share_one_record_and_survive_a_kill_9(pg_url: str) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-cluster-"))
    cluster = Cluster(tmp, base_config(tmp), store_url=pg_url)
    try:
        await asyncio.to_thread(cluster.up, AUTH)
        port = cluster.port
        first = await asyncio.gather(
            *(client_calls(port, [f"c{c}-{i}" for i in range(CALLS)]) for c in range(CLIENTS))
        )
        answered = {m: d for r in first for m, d in r.items()}
        assert len(answered) == CLIENTS * CALLS
        chains = dict(rows(pg_url, "SELECT chain, count(*) FROM audit GROUP BY chain"))
        assert set(chains) == {"replica-a", "replica-b"}, chains  # the balancer used both replicas

        verify = cli(cluster, "replica-a", "audit", "verify")
        assert verify.returncode == 0 and "2 replica chain(s)" in verify.stdout, verify.stdout + verify.stderr
        assert "postgres@127.0.0.1" in verify.stdout

        shown = cli(
            cluster, "replica-b", "audit", "--json", "--tail", "500"
        )  # what a user reads: all replicas
        assert shown.returncode == 0, shown.stderr
        assert set(answered.values()) <= {
            json.loads(line)["decision_id"] for line in shown.stdout.splitlines()
        }

        # kill -9 of replica a while 8 clients call through the balancer
        traffic = asyncio.gather(
            *(client_calls(port, [f"k{c}-{i}" for i in range(CALLS)], tolerate=True) for c in range(CLIENTS))
        )
        await asyncio.sleep(0.3)
        os.kill(cluster.procs["replica-a"].pid, signal.SIGKILL)
        after = await traffic
        later = await client_calls(port, [f"later-{i}" for i in range(4)])  # the survivor serves new clients
        assert len(later) == 4
        answered |= {m: d for r in after for m, d in r.items()} | later

        audit = rows(pg_url, "SELECT decision_id, event, outcome, arguments FROM audit")
        decided = {json.loads(a)["mark"] for _, e, _, a in audit if e == "decision" and a}
        finished = {d for d, e, o, _ in audit if e == "outcome" and o == "ok"}
        assert set(executed(tmp)) <= decided  # nothing ran without its decision on record
        assert set(answered.values()) <= finished  # every answered call has its outcome

        # a replica restarted on the same name continues its chain; verify still holds
        await asyncio.to_thread(cluster.start_replica, "replica-a")
        await asyncio.to_thread(wait_ok, cluster.ports["replica-a"], 60.0, cluster.procs["replica-a"], AUTH)
        verify = cli(cluster, "replica-b", "audit", "verify")
        assert verify.returncode == 0, verify.stdout + verify.stderr

        # one row altered in the database: verify over the cluster says which
        victim = rows(pg_url, "SELECT id FROM audit WHERE chain = 'replica-b' ORDER BY id LIMIT 1 OFFSET 3")[
            0
        ][0]
        with psycopg.connect(pg_url) as conn:
            conn.execute("UPDATE audit SET outcome = 'denied' WHERE id = %s", (victim,))
        verify = cli(cluster, "replica-b", "audit", "verify")
        assert verify.returncode == 1 and "BROKEN" in verify.stdout and str(victim) in verify.stdout, (
            verify.stdout
        )
    finally:
        await asyncio.to_thread(cluster.down)
