"""A server store needs ``sentinel.cluster.seal_key``. Without one each process signed with a random key of
its own, so what one process wrote (tasks, replies, passages, facts, consents) was unreadable by every other
process on the same database and by itself after a restart: a replica's memories and running tasks were lost
at each start, silently. Now a gateway, and a command that reads or writes the shared rows, refuses to start
on a server store without the key, naming the setting; with it, they start and read each other's rows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sentinel_mcp.config import load_config
from sentinel_mcp.gateway.replica import SharedStore, row_key, shared_store
from sentinel_mcp.policy.fact_store import Fact, FactStore
from tests.conftest import free_port
from sentinel_mcp.storage.location import LocationError
from tests.records.rig import ROOT

SEAL = "seal key for the required-key tests, 32+ chars"


def _config(tmp: Path, url: str, cluster: dict[str, str] | None) -> Path:
    sentinel: dict[str, object] = {"store": url, "data_dir": str(tmp / "data"), "builtins": []}
    if cluster is not None:
        sentinel["cluster"] = cluster
    path = tmp / "config.json"
    path.write_text(json.dumps({"mcpServers": {}, "sentinel": sentinel}))
    return path


def _run(config: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(config), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, env={**os.environ, **(env or {})})


@pytest.mark.parametrize("cluster", [None, {}, {"replica": "a"}, {"seal_key": ""}])
def test_a_server_store_without_a_seal_key_is_refused_naming_the_setting(
    tmp_path: Path, pg_url: str, cluster: dict[str, str] | None
) -> None:
    config = load_config(_config(tmp_path, pg_url, cluster))
    with pytest.raises(LocationError, match=r"sentinel\.cluster\.seal_key") as info:
        shared_store(config)
    assert "postgres" not in str(info.value).lower() or "***" in str(info.value)  # never the URL's secret
    with pytest.raises(LocationError, match=r"sentinel\.cluster\.seal_key"):
        row_key(config, "facts")


def test_a_replica_without_a_seal_key_does_not_start(tmp_path: Path, pg_url: str) -> None:
    config = _config(tmp_path, pg_url, {"replica": "a"})
    out = _run(config, "serve", "--http", f"127.0.0.1:{free_port()}")
    assert out.returncode != 0, out.stdout + out.stderr
    assert "sentinel.cluster.seal_key" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr, out.stderr


def test_commands_on_a_server_store_without_a_seal_key_refuse(tmp_path: Path, pg_url: str) -> None:
    config = _config(tmp_path, pg_url, None)
    for args in (["facts"], ["consent", "list"], ["sensors", "consent", "list"], ["kept", "list"]):
        out = _run(config, *args)
        assert out.returncode != 0 and "sentinel.cluster.seal_key" in out.stderr, (args, out.stderr)
        assert "Traceback" not in out.stderr, out.stderr


async def test_with_the_seal_key_processes_read_each_others_rows(tmp_path: Path, pg_url: str) -> None:
    """The other side: the key from the environment, a row written by one process read by a command."""
    config = _config(tmp_path, pg_url, {"seal_key": "${SEAL_FOR_TEST}"})
    os.environ["SEAL_FOR_TEST"] = SEAL
    try:
        shared, problems = shared_store(load_config(config))
    finally:
        del os.environ["SEAL_FOR_TEST"]
    assert shared is not None and shared.seal_key == SEAL.encode() and problems == []
    key = SharedStore(pg_url, "", "", SEAL.encode()).key("facts")
    async with FactStore(pg_url, key=key) as store:
        await store.add([Fact(session="s1", predicate="colour", args=["car", "red"], fact="colour(car,red)",
                              provenance="user")])
    out = _run(config, "facts", "--session", "s1", "--json", env={"SEAL_FOR_TEST": SEAL})
    assert out.returncode == 0, out.stderr
    assert [f["fact"] for f in json.loads(out.stdout)["facts"]] == ["colour(car,red)"]
