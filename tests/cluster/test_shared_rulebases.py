"""Rulebase versions shared by real replicas (two ``sentinel-mcp serve --http`` processes on one PostgreSQL,
each
with its own rulebase file): the replica started second takes the cluster's version; a hot reload on A reaches
B
(B decides on it, and its audit rows name it); a published version B cannot load leaves B on the version it
had,
``degraded`` with the reason in ``/healthz``; the next good version heals it. ``/healthz`` names the replica.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import httpx2
import psycopg
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from examples.cluster.recipe import Cluster, wait_ok
from sentinel_mcp.gateway.call_record import META_KEY
from sentinel_mcp.gateway.replica import SharedStore
from sentinel_mcp.policy.shared_rulebases import PURPOSE
from sentinel_mcp.storage.row_signature import sign
from tests.cluster.test_replicas import base_config, rows
from tests.records.rig import AUTH

ALLOW = "guard('rec__do', [mark = _], true).\n"
DENY = "guard('rec__do', [mark = _], fail).\n"


def health(port: int) -> dict[str, Any]:
    req = urllib.request.Request(f"http://127.0.0.1:{port}/healthz", headers=AUTH)
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:  # 503: the body still says why
        return json.loads(e.read())


def wait_for(port: int, check: Any, timeout: float = 20.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        h = health(port)
        if check(h):
            return h
        if time.monotonic() > deadline:
            raise AssertionError(f"127.0.0.1:{port} never got there: {h}")
        time.sleep(0.2)


async def call(port: int, mark: str) -> tuple[bool, str, str]:
    async with (
        httpx2.AsyncClient(timeout=30, headers=AUTH) as http,
        Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as c,
    ):
        r = await c.call_tool("rec__do", {"mark": mark})
        return r.is_error, r.content[0].text, r.meta[META_KEY]


def start(cluster: Cluster, name: str, rules: Path) -> int:
    cluster.base_config["sentinel"]["rulebases"] = [str(rules)]
    port = cluster.start_replica(name)
    wait_ok(port, proc=cluster.procs[name], headers=AUTH)
    return port


async def test_a_rulebase_version_reaches_every_replica_and_one_that_cannot_load_is_reported(
    pg_url: str,
) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-versions-"))
    cluster = Cluster(tmp, base_config(tmp), store_url=pg_url)
    rules_a, rules_b = tmp / "a-rules" / "gate.pl", tmp / "b-rules" / "gate.pl"
    for f in (rules_a, rules_b):
        f.parent.mkdir()
    rules_a.write_text(ALLOW)
    rules_b.write_text(DENY)  # B's own file differs: the cluster's version (A's, published first) wins
    try:
        port_a = await asyncio.to_thread(start, cluster, "replica-a", rules_a)
        port_b = await asyncio.to_thread(start, cluster, "replica-b", rules_b)
        ha, hb = health(port_a), health(port_b)
        assert (ha["replica"], hb["replica"]) == ("replica-a", "replica-b")
        first = ha["policy"]
        assert hb["policy"] == first, (ha, hb)
        denied, text, _ = await call(port_b, "on-b-1")
        assert not denied and text == "done:on-b-1", text  # decided by A's rules on B

        # a hot reload on A reaches B, which decides on it; the audit names the version that decided
        await asyncio.sleep(0.05)  # a new mtime for the file watcher
        rules_a.write_text(DENY)
        ha = await asyncio.to_thread(wait_for, port_a, lambda h: h["policy"] != first)
        second = ha["policy"]
        hb = await asyncio.to_thread(wait_for, port_b, lambda h: h["policy"] == second, 10.0)
        assert hb["status"] == "ok", hb
        denied, text, decision = await call(port_b, "on-b-2")
        assert denied and "not allowed" in text, text
        assert rows(
            pg_url,
            f"SELECT policy_version FROM audit WHERE decision_id = '{decision}' "
            "AND event IN ('decision', 'final')",
        ) == [(second,)]
        published = rows(pg_url, "SELECT version, replica FROM rulebase_versions ORDER BY id")
        assert published == [(first, "replica-a"), (second, "replica-a")], published

        key = SharedStore(pg_url, "", "", cluster.seal_key.encode()).key("rulebase version") or b""

        def signed_by_cluster(version: str, body: str) -> str:  # as a replica with the seal key signs it
            return sign(key, PURPOSE, version, "operator", body)

        # a version B cannot load: B keeps the one it has, degraded and saying why; it refuses calls meanwhile
        body = json.dumps({"files": [{"name": "gate.pl", "text": "guard('rec__do', [mark = _], (true.\n"}]})
        with psycopg.connect(pg_url) as conn:
            conn.execute(
                "INSERT INTO rulebase_versions (version, replica, cause, body, at, mac) "
                "VALUES ('badbadbadbad0001', 'operator', 'test', %s, 0, %s)",
                (body, signed_by_cluster("badbadbadbad0001", body)),
            )
        # degraded from the moment B reads the row (it is behind while it loads it), the reason once it failed
        hb = await asyncio.to_thread(
            wait_for, port_b, lambda h: "keeps" in h.get("policy_problem", "") and h["status"] == "degraded"
        )
        assert hb["policy"] == second, hb
        assert (
            "badbadbadbad0001" in hb["policy_problem"] and f"keeps version {second}" in hb["policy_problem"]
        )
        assert hb["policy_problem"] in hb["problems"]
        denied, text, decision = await call(port_b, "on-b-3")
        assert denied and "badbadbadbad0001" in text and second in text, text
        assert rows(
            pg_url,
            f"SELECT policy_version FROM audit WHERE decision_id = '{decision}' "
            "AND event IN ('decision', 'final')",
        ) == [(second,)]
        # malformed rows (a hostile version name, a file name that leaves the directory) are refused the same
        # way
        for version, name in [("../../etc", "gate.pl"), ("goodname0000002", "../escape.pl")]:
            body = json.dumps({"files": [{"name": name, "text": ALLOW}]})
            with psycopg.connect(pg_url) as conn:
                conn.execute(
                    "INSERT INTO rulebase_versions (version, replica, cause, body, at, mac) "
                    "VALUES (%s, 'operator', 'test', %s, 0, %s)",
                    (version, body, signed_by_cluster(version, body)),
                )
            hb = await asyncio.to_thread(
                wait_for, port_b, lambda h, v=version: v in h.get("policy_problem", "")
            )
            assert hb["policy"] == second, hb
        assert not list(tmp.rglob("escape.pl"))

        # the next good version heals every replica
        await asyncio.sleep(0.05)
        rules_a.write_text(ALLOW + "% healed\n")
        ha = await asyncio.to_thread(wait_for, port_a, lambda h: h["policy"] not in (first, second))
        hb = await asyncio.to_thread(wait_for, port_b, lambda h: h["policy"] == ha["policy"], 10.0)
        assert hb["status"] == "ok" and "policy_problem" not in hb, hb
        denied, text, _ = await call(port_b, "on-b-4")
        assert not denied, text
    finally:
        await asyncio.to_thread(cluster.down)
