"""A task waiting for the person's answer on replica A, answered on replica B (two real ``serve --http``
processes on one real PostgreSQL, one owner token file both follow): B resumes it only while the credentials
that started it on A still hold. What broke (red team "recheck11"): A's check was a closure of A's process;
B, taking the task over from the shared store, had none, and after the owner rotated a leaked token the
person's answer on B sent the leaked token's call as the owner. Now the task's row keeps a stamp of those
credentials (signed with the row), which B proves again (``a2a/resumed_credentials.py``)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx2
import pytest
from tests.a2a.a2a_rig import user_message
from tests.a2a.test_task_credentials_outlive_process import _approve, _config, _rpc, _said, _settled
from tests.console.console_rig import http_sentinel
from tests.identity.test_secret_rotation import _cli, _mcp_status

pytestmark = pytest.mark.timeout(240)
KEY = "cluster-recheck-test-seal-key-0123456789abcdef"


def _replicas(tmp: Path, url: str) -> tuple[Path, Path, str]:
    """Two replicas' configs in one directory: one data dir, so one owner token file both follow."""
    cfg, token = _config(tmp)
    body = json.loads(cfg.read_text())
    body["sentinel"]["a2a"].pop("task_db")  # the shared store's task rows, leased
    out = []
    for name in ("replica-a", "replica-b"):
        body["sentinel"].update(store=url, cluster={"replica": name, "seal_key": KEY})
        path = tmp / f"{name}.json"
        path.write_text(json.dumps(body))
        out.append(path)
    return out[0], out[1], token


@pytest.mark.parametrize("rotate", [True, False])
async def test_a_task_answered_on_another_replica_runs_only_while_its_token_holds(
        tmp_path: Path, pg_url: str, rotate: bool) -> None:
    cfg_a, cfg_b, token = _replicas(tmp_path, pg_url)
    call = {"type": "tool_call", "tool_call_id": "tc-1", "name": "tb__delete_thing", "args": {"name": "x1"}}
    async with httpx2.AsyncClient(timeout=60) as http:
        with http_sentinel(cfg_a) as (base_a, _pa), http_sentinel(cfg_b) as (base_b, _pb):
            task = await _rpc(http, base_a, token, "SendMessage", {"message": user_message({"data": call})})
            task = task["task"]
            assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task["status"]
            now = token
            if rotate:  # the owner rotates the leaked token; both replicas follow the file
                rotated = _cli(cfg_a, "token", "--rotate")
                assert rotated.returncode == 0, rotated.stderr
                now = rotated.stdout.strip()
                for base in (base_a, base_b):
                    for _ in range(200):  # bounded count of looks: refused within about a second
                        if await _mcp_status(http, base, token) == 401:
                            break
                        await asyncio.sleep(0.05)
                    assert await _mcp_status(http, base, token) == 401
            await _approve(base_b, token, task["id"])  # answered on B: B takes the task over
            done = await _settled(http, base_b, now, task["id"])
    if not rotate:
        assert done["status"]["state"] == "TASK_STATE_COMPLETED", done["status"]
        return
    assert done["status"]["state"] == "TASK_STATE_FAILED", done["status"]
    assert "no longer hold" in _said(done), _said(done)
    assert not done.get("artifacts"), done
