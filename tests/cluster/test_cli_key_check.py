"""A command run against the shared store (``sentinel-mcp audit``, ``facts``, ``swarm``, ``consent``, ...)
checks its ``sentinel.cluster.seal_key`` against the cluster's check row, as a replica does at start.
Before, only ``serve`` did: a command with another key read every signed row as nobody's (and said
"tampered") and wrote rows (a consent, a kept-fact clear) that no replica would ever take. Real
subprocesses, real PostgreSQL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from sentinel_mcp.gateway.cluster_key_check import check_cluster_key
from sentinel_mcp.storage import open_database
from sentinel_mcp.storage.open import release
from tests.records.rig import ROOT

pytestmark = pytest.mark.timeout(300)

KEY = "the cluster's seal key for the cli check " + "k" * 8
OTHER = "another seal key, not the cluster's own " + "o" * 8

# every command that opens the shared store (a new one is checked unless it is listed as never opening it)
COMMANDS = [
    ["audit"],
    ["audit", "verify"],
    ["facts"],
    ["kept", "list"],
    ["consent", "list"],
    ["swarm", "list"],
    ["sensors", "consent", "list"],
]


def _config(tmp: Path, url: str) -> Path:
    path = tmp / "cli.json"
    path.write_text(json.dumps({"mcpServers": {}, "sentinel": {
        "store": url, "data_dir": str(tmp / "data"), "builtins": [],
        "cluster": {"seal_key": "${SEAL_FOR_TEST}"},
    }}))
    return path


def _cli(cfg: Path, key: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                          env={**os.environ, "SEAL_FOR_TEST": key})


async def _checked_by_a_replica(url: str) -> None:
    db = open_database(url, "test")
    try:
        assert await check_cluster_key(db, KEY.encode()) is None  # what the first replica writes at start
    finally:
        await release(db)


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
async def test_a_command_with_another_key_is_refused(tmp_path: Path, pg_url: str, command: list[str]) -> None:
    await _checked_by_a_replica(pg_url)
    cfg = _config(tmp_path, pg_url)
    refused = _cli(cfg, OTHER, *command)
    out = refused.stdout + refused.stderr
    assert refused.returncode != 0, out[-3000:]
    assert "sentinel.cluster.seal_key" in out and "not the key the other replicas" in out, out[-3000:]
    assert "Traceback" not in out and KEY not in out and OTHER not in out, out[-3000:]
    # the other side: the cluster's key runs the same command
    ran = _cli(cfg, KEY, *command)
    ran_out = ran.stdout + ran.stderr
    assert "sentinel.cluster.seal_key" not in ran_out, ran_out[-3000:]
    # the audit commands read tables only a replica creates (this store never had one): their own refusal
    assert ran.returncode == 0 or (command[0] == "audit" and "does not exist" in ran_out), ran_out[-3000:]
    with psycopg.connect(pg_url, autocommit=True) as conn:  # the refused command wrote nothing over the check
        assert conn.execute("SELECT count(*) FROM cluster_key").fetchone() == (1,)


def test_a_command_that_cannot_check_the_key_is_refused(tmp_path: Path) -> None:
    """No store to check against (nothing listens): the command does not go on unchecked (fail closed)."""
    from tests.conftest import free_port

    cfg = _config(tmp_path, f"postgresql://postgres@127.0.0.1:{free_port()}/nothing")
    refused = _cli(cfg, KEY, "facts")
    out = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "sentinel.cluster.seal_key" in out, out[-3000:]
    assert "Traceback" not in out and KEY not in out, out[-3000:]


def test_commands_that_never_open_the_store_need_no_check(tmp_path: Path) -> None:
    from tests.conftest import free_port

    cfg = _config(tmp_path, f"postgresql://postgres@127.0.0.1:{free_port()}/nothing")
    shown = _cli(cfg, KEY, "config", "show")
    assert shown.returncode == 0, (shown.stdout + shown.stderr)[-3000:]
