"""A damaged gateway instance's audit log is said, never left out: `sentinel-mcp audit` shows the logs that
can be read and names the one that cannot (exit 1), so a reader never takes a shorter log for the whole
record. Two real gateways write their own logs; one is damaged on disk as a crash or a tamperer would."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.storage.instances import instance_dirs

from .rig import recorder_config

pytestmark = pytest.mark.timeout(120)


def _damage(db: Path, how: str) -> None:
    if how == "table renamed":
        with sqlite3.connect(db) as conn:
            conn.execute("ALTER TABLE audit RENAME TO audit_gone")
        return
    data = bytearray(db.read_bytes())
    page = int.from_bytes(data[16:18], "big") or 65536
    for start in range(page, len(data), page):  # every page but the first (the header and the schema)
        data[start : start + page] = bytes([0xA5]) * min(page, len(data) - start)
    db.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["table renamed", "pages overwritten"])
async def test_a_damaged_instance_log_is_named_and_the_others_shown(tmp_path: Path, how: str) -> None:
    config = recorder_config(tmp_path)
    for mark in ("first", "second"):  # two gateways, one after the other: a log each
        async with running_gateway(config) as rt, Client(rt.front.server) as c:
            for i in range(5):
                assert not (await c.call_tool("rec__do", {"mark": f"{mark}-{i}"})).is_error
    first, second = instance_dirs(tmp_path / "data")
    _damage(first / "sentinel.db", how)
    cfg = tmp_path / "cli.json"
    cfg.write_text(json.dumps({"sentinel": {"data_dir": str(tmp_path / "data"), "builtins": []}}))
    for view in (["audit", "--json", "--tail", "1000"], ["audit", "--tail", "1000"]):
        run = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), *view],
                             capture_output=True, text=True, timeout=60)
        assert run.returncode == 1, (view, run.stdout, run.stderr)
        assert str(first / "sentinel.db") in run.stderr and "cannot be read" in run.stderr, run.stderr
        assert "Traceback" not in run.stderr
        # the readable log is still shown, all of it: the second gateway's five calls
        if "--json" in view:
            assert len([json.loads(line) for line in run.stdout.splitlines()]) == 5, run.stdout
        else:
            assert len([line for line in run.stdout.splitlines() if "rec__do" in line]) == 5, run.stdout
