"""A replica started with another ``sentinel.cluster.seal_key`` than the cluster's refuses to start, naming
the setting and never printing a key. Before, it ran without complaint: what it signed was ignored by the
other replicas and its audit rows read as tampered. The first replica writes a check (a MAC of a fixed label
under the cluster's key) into the shared store; every later one verifies it with its own key."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from examples.cluster.recipe import wait_ok
from sentinel_mcp.gateway.cluster_key_check import check_cluster_key
from sentinel_mcp.storage import open_database
from tests.conftest import free_port
from sentinel_mcp.storage.location import LocationError
from sentinel_mcp.storage.open import release
from tests.records.rig import ROOT

pytestmark = pytest.mark.timeout(240)

KEY = "cluster seal key for the key-check test " + "k" * 8
OTHER = "another seal key, not the cluster's one " + "o" * 8


def _config(tmp: Path, url: str, name: str) -> Path:
    path = tmp / f"{name}.json"
    path.write_text(json.dumps({"mcpServers": {}, "sentinel": {
        "store": url, "data_dir": str(tmp / name), "builtins": [],
        "cluster": {"replica": name, "seal_key": "${SEAL_FOR_TEST}"},
    }}))
    return path


def _start(cfg: Path, key: str) -> tuple[subprocess.Popen[str], int]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http", f"127.0.0.1:{port}"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        env={**os.environ, "SEAL_FOR_TEST": key}, start_new_session=True)
    return proc, port


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()


def _refused(cfg: Path, key: str) -> str:
    proc, _ = _start(cfg, key)
    try:
        _, err = proc.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        _stop(proc)
        pytest.fail("a replica that must be refused at start started and kept serving")
    assert proc.returncode != 0, err[-3000:]
    return err


def test_a_replica_with_another_seal_key_does_not_start(tmp_path: Path, pg_url: str) -> None:
    first, port = _start(_config(tmp_path, pg_url, "replica-a"), KEY)
    try:
        wait_ok(port, proc=first)
        err = _refused(_config(tmp_path, pg_url, "replica-b"), OTHER)
        assert "sentinel.cluster.seal_key" in err and "not the key the other replicas" in err, err[-3000:]
        assert "Traceback" not in err, err[-3000:]
        assert KEY not in err and OTHER not in err  # never a key
        # the other side: the cluster's key starts a second replica beside the first
        second, port_b = _start(_config(tmp_path, pg_url, "replica-c"), KEY)
        try:
            wait_ok(port_b, proc=second)
        finally:
            _stop(second)
        assert first.poll() is None  # the first replica is not disturbed by either
    finally:
        _stop(first)
    # the check stands after every replica stopped: a lone replica with another key still does not start
    assert "sentinel.cluster.seal_key" in _refused(_config(tmp_path, pg_url, "replica-d"), OTHER)


@pytest.mark.parametrize("mac", ["", "0" * 64, "not hex \u00e9\u00e9", "x" * 10_000])
async def test_a_check_made_up_in_sql_refuses_every_key(pg_url: str, mac: str) -> None:
    """A row no key made verifies under none (fail closed): what a database writer can cause anyway."""
    db = open_database(pg_url, "test")
    try:
        await check_cluster_key(db, KEY.encode())  # the first: writes the check
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("UPDATE cluster_key SET mac = %s", (mac,))
        with pytest.raises(LocationError, match=r"sentinel\.cluster\.seal_key"):
            await check_cluster_key(db, KEY.encode())
    finally:
        await release(db)


async def test_the_first_key_stands_and_is_checked_again(pg_url: str) -> None:
    db = open_database(pg_url, "test")
    try:
        assert await check_cluster_key(db, KEY.encode()) is None
        assert await check_cluster_key(db, KEY.encode()) is None  # the same key: accepted every time
        with pytest.raises(LocationError):
            await check_cluster_key(db, OTHER.encode())
        assert await check_cluster_key(db, KEY.encode()) is None  # the refused key wrote nothing over it
        with psycopg.connect(pg_url, autocommit=True) as conn:
            assert conn.execute("SELECT count(*) FROM cluster_key").fetchone() == (1,)
    finally:
        await release(db)
