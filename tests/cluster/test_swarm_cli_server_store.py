"""``sentinel-mcp swarm list | status | gc`` run with a replica's config (a server store) read and act on the
cluster's builds the gateway wrote, not a local SQLite file: the same signed rows and the same checks as the
gateway's own reads (a row planted with another key, or edited in SQL, is never listed nor swept), and a CLI
that shares the replica's name is not taken for that replica's restart (its running builds are left alone).
Real PostgreSQL, the build service as the gateway builds it, the CLI in a subprocess."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from sentinel_mcp.swarm.build_service import BuildService
from sentinel_mcp.swarm.settings import SwarmSettings
from sentinel_mcp.swarm.state import SwarmStore
from tests.cluster.lease_worker import SEAL, SPEC, SilentModel, swarm_key

pytestmark = pytest.mark.timeout(180)
ROOT = Path(__file__).resolve().parents[2]
PLANTED, EDITED = "t20261205-070000-0c0c0c", "t20261205-070001-0d0d0d"


def write_config(tmp: Path, url: str, **cluster: str) -> Path:
    cfg = tmp / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {}, "sentinel": {
        "data_dir": str(tmp / "data"), "store": url, "builtins": [],
        "cluster": {"seal_key": SEAL, **cluster},
        # a tenth of a second: a build that failed before the command started is past it
        "swarm": {"retention": {"failed_workspace_days": 1e-6}}}}))
    return cfg


async def cli(cfg: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return await asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "swarm", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )


def sql(url: str, text: str, params: tuple = ()) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(text, params)


async def test_list_status_and_gc_act_on_the_clusters_builds(pg_url: str, tmp_path: Path) -> None:
    root = tmp_path / "data" / "swarm"  # where the gateway's swarm built-in keeps its builds' files
    service = BuildService(root, SwarmSettings(), store=pg_url, replica="replica-a", key=swarm_key())
    await service.start(sweep=False)

    async def backend() -> SilentModel:
        return SilentModel()

    try:
        tid = await service.submit(SPEC, backend, principal="alice")
        async with SwarmStore(pg_url, key=b"x" * 32) as other:  # another cluster's key, or rows made in SQL
            (root / PLANTED).mkdir(parents=True)
            assert await other.create_task(PLANTED, {"app_name": "Planted"}, root / PLANTED, principal="bob",
                                           lease=("replica-a", "replica-a/x", 600.0))
        sql(pg_url, "UPDATE tasks SET state = 'FAILED', finished_at = 1000 WHERE task_id = %s", (PLANTED,))
        cfg = write_config(tmp_path, pg_url, replica="replica-a")  # the replica's own config, its name too

        listed = await cli(cfg, "list", "--json")
        assert listed.returncode == 0, listed.stdout + listed.stderr
        ids = [t["task_id"] for t in json.loads(listed.stdout)]
        assert ids == [tid], listed.stdout  # the gateway's build; the planted row is not a build
        shown = await cli(cfg, "status", tid, "--json")
        assert shown.returncode == 0, shown.stdout + shown.stderr
        assert json.loads(shown.stdout)["task_id"] == tid
        assert json.loads(shown.stdout)["state"] not in ("FAILED", "COMPLETED")
        planted = await cli(cfg, "status", PLANTED)
        assert planted.returncode == 1 and "Traceback" not in planted.stderr, planted.stdout + planted.stderr
        # the commands, named as the replica, did not end its running build as if it had restarted
        assert (await service.status(tid))["state"] not in ("FAILED", "COMPLETED")
        assert not (root / "swarm.db").exists()  # nothing read from, nor made in, a local file

        await service.cancel(tid)
        assert (await service.status(tid))["state"] == "FAILED"
        async with SwarmStore(pg_url, key=swarm_key()) as store:  # a build signed, its end edited in SQL
            (root / EDITED).mkdir(parents=True)
            assert await store.create_task(EDITED, {"app_name": "Edited"}, root / EDITED, principal="carol",
                                           lease=("replica-a", "replica-a/y", 600.0))
            await store.set_state(EDITED, "COMPLETED")
        sql(pg_url, "UPDATE tasks SET state = 'FAILED' WHERE task_id = %s", (EDITED,))

        dry = await cli(cfg, "gc", "--dry-run", "--json")
        assert dry.returncode == 0, dry.stdout + dry.stderr
        assert json.loads(dry.stdout)["workspaces"] == [tid] and (root / tid).is_dir(), dry.stdout
        done = await cli(cfg, "gc", "--json")
        assert done.returncode == 0, done.stdout + done.stderr
        assert json.loads(done.stdout)["workspaces"] == [tid], done.stdout
        assert not (root / tid).exists() and (root / PLANTED).is_dir() and (root / EDITED).is_dir()
    finally:
        await service.close()


async def test_a_server_store_without_its_seal_key_is_refused_not_read_locally(
    pg_url: str, tmp_path: Path
) -> None:
    cfg = tmp_path / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {}, "sentinel": {
        "data_dir": str(tmp_path / "data"), "store": pg_url, "builtins": []}}))
    for args in (("list",), ("status", PLANTED), ("gc", "--dry-run")):
        run = await cli(cfg, *args)
        assert run.returncode == 2 and "seal_key" in run.stderr and "Traceback" not in run.stderr, run.stderr
    assert not (tmp_path / "data" / "swarm" / "swarm.db").exists()


async def test_a_build_made_by_the_cli_is_the_clusters(pg_url: str, tmp_path: Path) -> None:
    """``swarm build`` with a replica's config records its build in the shared store, signed with the
    cluster's key: the gateway's own service (another replica) lists it."""
    from tests.swarm.support.scripted_model import SPEC as SCRIPTED_SPEC
    from tests.swarm.support.scripted_model import ScriptedModelServer
    from tests.swarm.support.swarm_fixtures import FAST_OPENAI, NO_TOOLS

    server = ScriptedModelServer().start()
    try:
        cfg = tmp_path / "sentinel.json"
        cfg.write_text(json.dumps({"mcpServers": {}, "sentinel": {
            "data_dir": str(tmp_path / "data"), "store": pg_url, "builtins": [],
            "cluster": {"seal_key": SEAL, "replica": "replica-cli"},
            "swarm": {"backend": "openai", "openai": FAST_OPENAI, "verify": NO_TOOLS}}}))
        spec = tmp_path / "spec.json"
        spec.write_text(json.dumps(SCRIPTED_SPEC))
        env = {"SWARM_OPENAI_BASE_URL": server.url, "SWARM_OPENAI_API_KEY": "test-key"}
        done = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "swarm", "build", str(spec), "--json"],
            cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
            env=dict(os.environ) | env,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        tid = json.loads(done.stdout)["task_id"]
    finally:
        server.stop()
    assert not (tmp_path / "data" / "swarm" / "swarm.db").exists()
    gateway = BuildService(tmp_path / "other", SwarmSettings(), store=pg_url, replica="replica-b",
                           key=swarm_key())
    await gateway.start(sweep=False)
    try:
        assert [t["task_id"] for t in await gateway.list()] == [tid]
        shown = await gateway.status(tid)
        assert shown["state"] == "COMPLETED" and shown["files_on_replica"] == "replica-cli"
    finally:
        await gateway.close()
