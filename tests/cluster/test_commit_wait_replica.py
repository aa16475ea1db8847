"""The commit bound (``storage/commit_wait.py``) seen from a real replica (``sentinel-mcp serve --http``): a
synchronous standby gone (a name in ``synchronous_standby_names`` no server answers to) makes every commit
wait for ever. The replica answers anyway: the call whose record's commit is held is refused within the
bound and never forwarded, so are the calls after it while the store is degraded (each within the bound too:
the records gate probes the store inline, ``PROBE_EVERY`` 0.25 s, and the probe's commit is held as well),
``/healthz`` says ``degraded`` naming the cause, and once commits are confirmed again the replica serves by
itself. About 6 minutes on a loaded 2-core machine: marked slow.
``tests/cluster/test_commit_wait_bounded.py`` covers the store alone; this, what a client and a balancer see.

The bound is ``sentinel.cluster.commit_wait_seconds`` (default 15 s), set to ``BOUND`` here: each held commit
is waited out several times over, and the default's 15 s made this test about 40 s of waiting in CI."""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from examples.cluster.recipe import Cluster, wait_ok
from tests.cluster.test_commit_wait_bounded import standby_gone
from tests.cluster.test_replicas import base_config
from tests.records.rig import AUTH, executed

pytestmark = [pytest.mark.timeout(900), pytest.mark.slow]

HANG = 120  # a bound on one call of this test (the store's own bound plus a look), not a measurement
BOUND = 5.0  # the replica's commit_wait_seconds: short, yet far above a statement's time on a loaded machine


def health(port: int) -> dict:
    """``/healthz``, waited for up to ``HANG``: it probes a degraded store inline, and that probe's commit is
    held to the same bound as a call's (seen: the 5 s of the other tests' helper ran out)."""
    import urllib.error
    import urllib.request

    req = urllib.request.Request(f"http://127.0.0.1:{port}/healthz", headers=AUTH)
    try:
        with urllib.request.urlopen(req, timeout=HANG) as r:
            return dict(json.loads(r.read()))
    except urllib.error.HTTPError as e:
        return dict(json.loads(e.read()))


async def _call(port: int, mark: str) -> tuple[bool, str]:
    async with (
        httpx2.AsyncClient(timeout=HANG, headers=AUTH) as http,
        Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as c,
    ):
        r = await asyncio.wait_for(c.call_tool("rec__do", {"mark": mark}), HANG)
        return r.is_error, r.content[0].text if r.content else ""


async def test_a_replica_whose_commits_are_never_confirmed_refuses_within_the_bound_and_recovers() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-sync-replica-"))
    config = base_config(tmp)
    config["sentinel"]["cluster"] = {"commit_wait_seconds": BOUND}
    cluster = Cluster(tmp, config)  # its own PostgreSQL: this test changes a server-wide setting
    try:
        await asyncio.to_thread(cluster.start_database)
        port = cluster.start_replica("replica-a")
        await asyncio.to_thread(wait_ok, port, 60.0, cluster.procs["replica-a"], AUTH)
        assert (await _call(port, "before"))[0] is False
        server = cluster.server
        assert server is not None
        await asyncio.to_thread(standby_gone, server, True)
        # pg_reload_conf only signals: a backend may commit once more before it reads the setting; a bounded
        # count of calls until one is held and refused
        refused: list[tuple[str, str]] = []
        for i in range(20):
            is_error, text = await _call(port, f"held-{i}")
            if is_error:
                refused.append((f"held-{i}", text))
                break
        assert refused, "no call's commit waited for the standby"
        assert "not confirm" in refused[0][1] or "could not record" in refused[0][1], refused
        status = await asyncio.to_thread(health, port)
        assert status["status"] == "degraded" and "not confirm" in json.dumps(status), status
        # the bound in force is the config's (twice it for a statement run alone: the health probe's, say)
        assert any(f"within {b:g} s" in json.dumps(status) for b in (BOUND, 2 * BOUND)), status
        after = [await _call(port, f"degraded-{i}") for i in range(2)]
        assert all(is_error for is_error, _ in after), after
        ran = set(executed(tmp))
        assert refused[0][0] not in ran and not {f"degraded-{i}" for i in range(2)} & ran  # never forwarded
        assert cluster.procs["replica-a"].poll() is None

        await asyncio.to_thread(standby_gone, server, False)
        deadline = time.monotonic() + HANG
        while (await asyncio.to_thread(health, port))["status"] != "ok":  # back by itself, no restart
            assert time.monotonic() < deadline, health(port)
            await asyncio.sleep(0.5)
        assert (await _call(port, "after"))[0] is False
        assert "after" in executed(tmp)
    finally:
        server = cluster.server
        if server is not None:
            await asyncio.to_thread(standby_gone, server, False)
        await asyncio.to_thread(cluster.down)

