"""An A2A task runs on after the request that created it: its guarded call, waiting inside Sentinel (for a
slot of its upstream's ``max_in_flight``), is sent only while the creating request's credentials still hold.

What broke (red team "a2arecheck10"): an MCP call that waited was checked again before it was sent
(``gateway/caller_recheck.py``), but an A2A task's call went through ``GatewayPort.invoke`` without the
check: the holder of a leaked owner token started tasks (``returnImmediately``) behind a slow call, the owner
rotated the token, and every queued task still reached the upstream, as the owner. Now the task keeps the
check and its call passes it: a lapsed one ends the task FAILED with the reason, and an audit row says so.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import httpx2
import pytest
from tests.gateway.helpers import TOOLBOX
from tests.identity.identity_rig import http_sentinel, write_config
from tests.identity.test_revoked_queued_calls import _held, _headers, _waiting
from tests.identity.test_secret_rotation import _cli, _mcp_status
from tests.tls.tls_rig import audit_rows
from tests.support.forked_upstreams import forked_spec

pytestmark = pytest.mark.timeout(180)

TERMINAL = {"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_REJECTED", "TASK_STATE_CANCELED"}


def _a2a(method: str, params: dict, token: str) -> tuple[dict, dict[str, str]]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json", "A2A-Version": "1.0"}
    return body, headers


async def _start_task(http: httpx2.AsyncClient, base: str, token: str, path: Path) -> dict:
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"data": {
        "type": "tool_call", "tool_call_id": "tc-1", "name": "tb__held", "args": {"path": str(path)}}}]}
    body, headers = _a2a("SendMessage", {"message": message, "configuration": {"returnImmediately": True}},
                         token)
    r = await http.post(f"{base}/a2a", json=body, headers=headers)
    assert r.status_code == 200, r.text
    return r.json()["result"]["task"]


async def _settled(http: httpx2.AsyncClient, base: str, token: str, task_id: str) -> dict:
    for _ in range(1200):
        body, headers = _a2a("GetTask", {"id": task_id}, token)
        task = (await http.post(f"{base}/a2a", json=body, headers=headers)).json()["result"]
        if task["status"]["state"] in TERMINAL:
            return task
        await asyncio.sleep(0.05)
    raise AssertionError(f"task {task_id} never settled: {task}")


def _said(task: dict) -> str:
    return " ".join(p.get("text", "") for p in (task["status"].get("message") or {}).get("parts", []))


@pytest.mark.parametrize("rotate", [True, False])
async def test_a_task_queued_when_its_token_is_revoked_never_runs(tmp_path: Path, rotate: bool) -> None:
    cfg = write_config(tmp_path, policy={"allow": ["tb__*"]})
    body = json.loads(cfg.read_text())
    body["mcpServers"]["tb"] = {**forked_spec(TOOLBOX), "max_in_flight": 1}
    cfg.write_text(json.dumps(body))
    token = _cli(cfg, "token").stdout.strip()
    first, queued = tmp_path / "first", tmp_path / "queued"
    with http_sentinel(cfg) as (base, _):
        async with httpx2.AsyncClient(timeout=120) as http:
            running = asyncio.ensure_future(http.post(f"{base}/mcp", json=_held(first, 1),
                                                      headers=_headers(token)))
            for _ in range(1200):  # the first call holds the only slot: its file says it started
                if first.exists():
                    break
                await asyncio.sleep(0.05)
            assert first.exists()
            task = await _start_task(http, base, token, queued)  # answered at once; its call waits
            for _ in range(600):  # the task's call waits for the slot (the operator's figure says so)
                if await _waiting(http, base, token) == 1:
                    break
                await asyncio.sleep(0.05)
            assert await _waiting(http, base, token) == 1
            now = token
            if rotate:
                rotated = _cli(cfg, "token", "--rotate")
                assert rotated.returncode == 0, rotated.stderr
                now = rotated.stdout.strip()
                for _ in range(200):  # the old token is refused within about a second
                    if await _mcp_status(http, base, token) == 401:
                        break
                    await asyncio.sleep(0.05)
                assert await _mcp_status(http, base, token) == 401
            Path(str(first) + ".go").touch()
            Path(str(queued) + ".go").touch()  # released at once, if it ever starts
            await running
            done = await _settled(http, base, now, task["id"])  # read with the token the owner holds now
    if not rotate:
        assert done["status"]["state"] == "TASK_STATE_COMPLETED", done
        assert queued.read_text() == "started\n"
        return
    assert not queued.exists(), "the queued task of the revoked token reached the upstream"
    assert done["status"]["state"] == "TASK_STATE_FAILED", done
    assert "no longer hold" in _said(done), _said(done)
    assert token not in json.dumps(done)
    rows = await audit_rows(cfg, origin="a2a")  # the audit says why it was not sent
    lapsed = [r for r in rows if r.get("outcome") == "credentials_lapsed"]
    assert [r.get("tool") for r in lapsed] == ["tb__held"], rows
