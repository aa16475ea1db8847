"""A chat turn (and a task) over the A2A WebSocket binding waits inside Sentinel (for a slot of the LLM
upstream's ``max_in_flight``) and is sent only while the connection's credentials still hold.

What broke (red team "recheck11"): each frame was checked as it arrived (``ws_binding._no_longer``), but the
turn it started called the LLM (or relayed to another agent) without the check: the holder of a leaked owner
token queued chat turns behind a busy LLM, the owner rotated the token, and the queued turn still reached the
LLM as the owner (no later frame came to close the connection). Now a chat turn's call carries the
connection's check (``gateway/caller_recheck.py``): refused, and audited ``credentials_lapsed``. Real Sentinel
over HTTP and WebSocket, real token rotation from the CLI, a real (held) upstream."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from tests.a2a.test_ws_binding import Peer, ws_connect
from tests.identity.identity_rig import http_sentinel, write_config
from tests.identity.test_secret_rotation import _cli, _mcp_status
from tests.tls.tls_rig import audit_rows

pytestmark = pytest.mark.timeout(90)
HELD_LLM = str(Path(__file__).with_name("held_llm.py"))


async def _waiting(http: httpx2.AsyncClient, base: str, token: str) -> int:
    text = (await http.get(f"{base}/metrics", headers={"Authorization": f"Bearer {token}"})).text
    found = re.findall(r'^sentinel_upstream_calls_waiting(?:_turn)?\{upstream="llm"\} (\d+)', text, re.M)
    return sum(int(n) for n in found) if found else -1


async def _replies(ws: Any, ids: set[int]) -> dict[int, dict[str, Any]]:
    """The replies to ``ids``, in whatever order they come (a refused turn may answer before the first)."""
    found: dict[int, dict[str, Any]] = {}
    while set(found) != ids:
        body = json.loads(await ws.recv())
        if body.get("id") in ids:
            found[body["id"]] = body
    return found


def _prompts(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


async def _until(check: Any, what: str) -> None:
    for _ in range(600):  # a bounded count of looks
        if await check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(what)


@pytest.mark.parametrize("rotate", [True, False])
async def test_a_chat_turn_queued_when_its_token_is_revoked_never_reaches_the_llm(
        tmp_path: Path, rotate: bool) -> None:
    cfg = write_config(tmp_path, policy={"allow": ["llm__*"]})
    body = json.loads(cfg.read_text())
    log = tmp_path / "llm.log"
    body["mcpServers"]["llm"] = {"command": sys.executable, "args": [HELD_LLM, str(log)], "max_in_flight": 1}
    cfg.write_text(json.dumps(body))
    token = _cli(cfg, "token").stdout.strip()
    with http_sentinel(cfg) as (base, _):
        async with httpx2.AsyncClient(timeout=120) as http, ws_connect(
                base.replace("http://", "ws://") + "/a2a/ws",
                additional_headers={"Authorization": f"Bearer {token}"}) as ws:
            peer = Peer(ws)
            opened = (await peer.call("chat_open", {}))["result"]
            assert opened["responder"] == "local_llm", opened
            first = {"jsonrpc": "2.0", "id": 101, "method": "chat_message",
                     "params": {"channel_id": opened["channel_id"], "text": "first"}}
            queued = {**first, "id": 102, "params": {**first["params"], "text": "queued"}}
            await ws.send(json.dumps(first))

            async def holding() -> bool:
                return _prompts(log) == 1

            await _until(holding, "the first turn never reached the LLM")
            await ws.send(json.dumps(queued))

            async def waiting() -> bool:
                return await _waiting(http, base, token) == 1

            await _until(waiting, "the second turn never waited for the LLM's slot")
            now = token
            if rotate:
                rotated = _cli(cfg, "token", "--rotate")
                assert rotated.returncode == 0, rotated.stderr
                now = rotated.stdout.strip()

                async def refused() -> bool:
                    return await _mcp_status(http, base, token) == 401

                await _until(refused, "the old token was never refused")
            Path(str(log) + ".go").touch()
            replies = await asyncio.wait_for(_replies(ws, {101, 102}), 60)
    assert replies[101]["result"]["text"] == "HELD REPLY", replies  # sent before the rotation
    if not rotate:
        assert replies[102]["result"]["text"] == "HELD REPLY", replies
        assert _prompts(log) == 2
        return
    assert _prompts(log) == 1, "the queued turn of the revoked token reached the LLM"
    assert "no longer hold" in json.dumps(replies[102]), replies[102]
    assert token not in json.dumps(replies[102])
    rows = await audit_rows(cfg, origin="a2a")
    lapsed = [r for r in rows if r.get("outcome") == "credentials_lapsed"]
    assert [r.get("tool") for r in lapsed] == ["llm__llm_generate"], rows
    assert now != token


async def _task(http: httpx2.AsyncClient, base: str, token: str, task_id: str) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task_id}}
    headers = {"Authorization": f"Bearer {token}", "A2A-Version": "1.0"}
    return (await http.post(f"{base}/a2a", json=body, headers=headers)).json()["result"]


@pytest.mark.parametrize("rotate", [True, False])
async def test_a_task_a_socket_started_waits_and_is_not_sent_once_its_token_is_revoked(
        tmp_path: Path, rotate: bool) -> None:
    """(The same over the binding's ``tool_call``: the task it starts keeps the connection's check.)"""
    cfg = write_config(tmp_path, policy={"allow": ["llm__*"]})
    body = json.loads(cfg.read_text())
    log = tmp_path / "llm.log"
    body["mcpServers"]["llm"] = {"command": sys.executable, "args": [HELD_LLM, str(log)], "max_in_flight": 1}
    cfg.write_text(json.dumps(body))
    token = _cli(cfg, "token").stdout.strip()
    with http_sentinel(cfg) as (base, _):
        async with httpx2.AsyncClient(timeout=120) as http, ws_connect(
                base.replace("http://", "ws://") + "/a2a/ws",
                additional_headers={"Authorization": f"Bearer {token}"}) as ws:
            peer = Peer(ws)
            opened = (await peer.call("chat_open", {}))["result"]
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": 101, "method": "chat_message",
                                      "params": {"channel_id": opened["channel_id"], "text": "first"}}))

            async def holding() -> bool:
                return _prompts(log) == 1

            await _until(holding, "the first turn never reached the LLM")
            started = await peer.call("tool_call", {"tool_call_id": "tc-1", "name": "llm__llm_generate",
                                                    "args": {"prompt": "queued"}, "return_immediately": True})
            task_id = started["result"]["task"]["id"]

            async def waiting() -> bool:
                return await _waiting(http, base, token) == 1

            await _until(waiting, "the task's call never waited for the LLM's slot")
            now = token
            if rotate:
                rotated = _cli(cfg, "token", "--rotate")
                assert rotated.returncode == 0, rotated.stderr
                now = rotated.stdout.strip()

                async def refused() -> bool:
                    return await _mcp_status(http, base, token) == 401

                await _until(refused, "the old token was never refused")
            Path(str(log) + ".go").touch()
            await asyncio.wait_for(_replies(ws, {101}), 60)

            async def settled() -> bool:
                return (await _task(http, base, now, task_id))["status"]["state"] not in (
                    "TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")

            await _until(settled, "the task never settled")
            done = await _task(http, base, now, task_id)
    if not rotate:
        assert done["status"]["state"] == "TASK_STATE_COMPLETED", done["status"]
        assert _prompts(log) == 2
        return
    assert _prompts(log) == 1, "the socket-started task of the revoked token reached the LLM"
    assert done["status"]["state"] == "TASK_STATE_FAILED", done["status"]
    assert "no longer hold" in json.dumps(done["status"]), done["status"]
