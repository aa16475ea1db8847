"""An A2A task waiting for the person's answer keeps which credentials started it beyond the process that
took its request: a task read back from the task journal (a restart here; another replica on a shared store
the same way) is resumed only while those credentials still hold.

What broke (red team "recheck11"): the check a task kept was a closure of the process that took the request
(``TaskRecord.recheck``). The holder of a leaked owner token started a task that asks the person; the owner
rotated the token; the task, read back after a restart (or by another replica), had no check any more, and the
person's answer in the console sent its call as the owner. Now the task's waiting row keeps a stamp of the
credentials (``identity/credential_stamp.py``: a keyed fingerprint of the token, a certificate's chain),
proved again wherever the task resumes: a lapsed one ends it FAILED and the audit says so.
Real Sentinel over HTTP (A2A endpoint, console), real token rotation from the CLI, a real SQLite journal."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
from tests.a2a.a2a_rig import user_message
from tests.console.console_rig import console_config, console_secret, http_sentinel, items_of, signed_in
from tests.identity.test_secret_rotation import _cli, _mcp_status
from tests.tls.tls_rig import audit_rows

pytestmark = pytest.mark.timeout(240)
WAITING = ("TASK_STATE_INPUT_REQUIRED", "TASK_STATE_WORKING", "TASK_STATE_SUBMITTED")


async def _rpc(http: httpx2.AsyncClient, base: str, token: str, method: str,
               params: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    headers = {"A2A-Version": "1.0", "Authorization": f"Bearer {token}"}
    r = await http.post(base + "/a2a", json=body, headers=headers)
    assert r.status_code == 200, r.text
    return r.json()["result"]


def _config(tmp: Path) -> tuple[Path, str]:
    """The console rig's config with the owner's token generated (a file the owner can rotate) and a task
    journal; the owner's console secret configured (the rig's, for the first token)."""
    cfg = console_config(tmp)
    body = json.loads(cfg.read_text())
    body["sentinel"]["http"].pop("token")
    body["sentinel"]["a2a"]["task_db"] = str(tmp / "a2a-tasks.db")
    cfg.write_text(json.dumps(body))
    token = _cli(cfg, "token").stdout.strip()
    body["sentinel"]["http"]["console_secret"] = console_secret(token)
    cfg.write_text(json.dumps(body))
    return cfg, token


async def _approve(base: str, token: str, task_id: str) -> None:
    async with signed_in(base, token) as person:
        page = await person.page("/console/inbox")
        items = [i for i in items_of(page) if i.startswith("a2a-") and task_id in i]
        assert len(items) == 1, page[-2000:]
        r = await person.post(f"/console/inbox/{items[0]}", {"decision": "approve"})
        assert r.status_code in (303, 409), r.text[:500]


async def _settled(http: httpx2.AsyncClient, base: str, token: str, task_id: str) -> dict[str, Any]:
    for _ in range(300):  # bounded count of looks
        task = await _rpc(http, base, token, "GetTask", {"id": task_id})
        if task["status"]["state"] not in WAITING:
            return task
        await asyncio.sleep(0.1)
    raise AssertionError(f"task {task_id} never settled: {task['status']}")


def _said(task: dict[str, Any]) -> str:
    return " ".join(p.get("text", "") for p in (task["status"].get("message") or {}).get("parts", []))


@pytest.mark.parametrize("rotate", [True, False])
async def test_a_task_read_back_after_a_restart_resumes_only_while_its_token_holds(
        tmp_path: Path, rotate: bool) -> None:
    cfg, token = _config(tmp_path)
    call = {"type": "tool_call", "tool_call_id": "tc-1", "name": "tb__delete_thing", "args": {"name": "x1"}}
    async with httpx2.AsyncClient(timeout=60) as http:
        with http_sentinel(cfg) as (base, _proc):
            task = (await _rpc(http, base, token, "SendMessage", {"message": user_message({"data": call})}))
            task = task["task"]
            assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task["status"]
        now = token
        if rotate:  # the owner learns of the leak and rotates, while the task waits
            rotated = _cli(cfg, "token", "--rotate")
            assert rotated.returncode == 0, rotated.stderr
            now = rotated.stdout.strip()
            assert now != token
        with http_sentinel(cfg) as (base, _proc):  # a new process reads the task back from its journal
            assert await _mcp_status(http, base, token) == (401 if rotate else 200)
            await _approve(base, token, task["id"])  # the person answers it in the console
            done = await _settled(http, base, now, task["id"])
    if not rotate:
        assert done["status"]["state"] == "TASK_STATE_COMPLETED", done["status"]
        return
    assert done["status"]["state"] == "TASK_STATE_FAILED", done["status"]
    assert "no longer hold" in _said(done), _said(done)
    assert not done.get("artifacts"), done  # the tool never ran
    assert token not in json.dumps(done)
    rows = await audit_rows(cfg, origin="a2a")
    lapsed = [r for r in rows if r.get("outcome") == "credentials_lapsed"]
    assert [r.get("tool") for r in lapsed] == ["tb__delete_thing"], rows
