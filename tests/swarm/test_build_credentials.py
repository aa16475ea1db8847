"""A build runs on after the request that started it: each of its steps and model calls is made only while
the credentials of that request still hold.

What broke (red team "swarmcred12"): ``swarm_build`` (``wait: false``) answered at once and its build ran up
to ``max_minutes`` (90) on the owner's token, with no check of that token again: the holder of a leaked token
started a build, the owner rotated the token (``config token --rotate``), and the build went on calling the
model, as the owner, to its end. Now the build keeps the request's check and asks it before each step and
model call: a lapsed one ends the build FAILED with the reason, and one audit row says so.
"""

from __future__ import annotations

import asyncio
import sys
import json
from pathlib import Path

import httpx2
import pytest
from tests.identity.identity_rig import http_sentinel, write_config
from tests.identity.test_revoked_queued_calls import META
from tests.identity.test_secret_rotation import _cli, _mcp_status
from tests.swarm.support.scripted_model import SPEC
from tests.swarm.support.swarm_fixtures import FAST_OPENAI, NO_TOOLS
from tests.tls.tls_rig import audit_rows

pytestmark = pytest.mark.timeout(180)

TERMINAL = {"COMPLETED", "FAILED"}


def _config(tmp_path: Path) -> Path:
    cfg = write_config(tmp_path, builtins=["swarm"], policy={"allow": ["swarm__*"]},
                       swarm={"backend": "openai", "openai": FAST_OPENAI, "verify": NO_TOOLS})
    return cfg


async def _tool(http: httpx2.AsyncClient, base: str, token: str, name: str, arguments: dict) -> dict:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": META}}
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name,
               "Authorization": f"Bearer {token}"}
    r = await http.post(f"{base}/mcp", json=body, headers=headers)
    assert r.status_code == 200, r.text
    text = r.text
    if text.startswith("event:") or "\ndata:" in text or text.startswith("data:"):
        text = [line[5:] for line in text.splitlines() if line.startswith("data:")][-1]
    return json.loads(text)["result"]


async def _settled(http: httpx2.AsyncClient, base: str, token: str, task_id: str) -> dict:
    for _ in range(1200):
        result = await _tool(http, base, token, "swarm__swarm_status", {"task_id": task_id})
        status = result.get("structuredContent") or {}
        if status.get("state") in TERMINAL:
            return status
        await asyncio.sleep(0.05)
    raise AssertionError(f"build {task_id} never ended: {result}")


async def _started(http: httpx2.AsyncClient, base: str, token: str) -> str:
    result = await _tool(http, base, token, "swarm__swarm_build", {"spec": SPEC, "wait": False})
    assert not result.get("isError"), result
    return result["structuredContent"]["task_id"]


@pytest.mark.parametrize("rotate", [True, False])
async def test_a_build_stops_when_the_token_that_started_it_is_rotated(
    tmp_path: Path, openai_env, rotate: bool
) -> None:
    openai_env.script("coder", {"hold": True})  # the first file's model call waits until released
    cfg = _config(tmp_path)
    token = _cli(cfg, "token").stdout.strip()
    with http_sentinel(cfg) as (base, _):
        async with httpx2.AsyncClient(timeout=120) as http:
            task_id = await _started(http, base, token)
            for _ in range(1200):  # the build is in its first coder call
                if any(r.get("held") for r in openai_env.requests):
                    break
                await asyncio.sleep(0.05)
            assert any(r.get("held") for r in openai_env.requests)
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
            asked = len(openai_env.requests)
            openai_env.release.set()
            done = await _settled(http, base, now, task_id)  # read with the token the owner holds now
    if not rotate:
        assert done["state"] == "COMPLETED", done
        assert len(openai_env.requests) > asked
        return
    assert done["state"] == "FAILED", done
    assert "no longer hold" in done["error"], done["error"]
    assert len(openai_env.requests) == asked, "the build of a rotated token called the model again"
    assert token not in json.dumps(done)
    rows = await audit_rows(cfg, origin="builtin")
    lapsed = [r for r in rows if r.get("outcome") == "credentials_lapsed"]
    assert len(lapsed) == 1, rows
    assert lapsed[0].get("principal") == "owner" and task_id in json.dumps(lapsed[0]), lapsed


# ---- a build's model calls are its caller's: their reach, quota and audit rows (not Sentinel's own) ----

MODEL_TOOL = str(Path(__file__).with_name("support") / "model_tool_server.py")


def _principal_config(tmp_path: Path, dave_tools: list[str], model_url: str) -> Path:
    cfg = write_config(
        tmp_path, builtins=["swarm"], policy={"allow": ["swarm__*", "fm__*"]},
        principals=[{"name": "dave", "token": DAVE, "tools": dave_tools}],
        swarm={"backend": "local", "local": {"tool": "fm__generate"}, "verify": NO_TOOLS},
    )
    body = json.loads(cfg.read_text())
    body["mcpServers"]["fm"] = {"command": sys.executable, "args": [MODEL_TOOL],
                                "env": {"SWARM_OPENAI_BASE_URL": model_url}}
    cfg.write_text(json.dumps(body))
    return cfg


DAVE = "dave-token-0123456789abcdef00"


async def test_a_builds_model_calls_are_made_as_its_caller(tmp_path: Path, openai_env) -> None:
    cfg = _principal_config(tmp_path, ["swarm__*", "fm__*"], openai_env.url)
    with http_sentinel(cfg) as (base, _):
        async with httpx2.AsyncClient(timeout=120) as http:
            task_id = await _started(http, base, DAVE)
            done = await _settled(http, base, DAVE, task_id)
    assert done["state"] == "COMPLETED", (done.get("error"), done.get("steps"))
    rows = [r for r in await audit_rows(cfg, origin="builtin") if r.get("tool") == "fm__generate"]
    assert rows and len(openai_env.requests) > 0
    assert {r.get("principal") for r in rows} == {"dave"}, rows  # never "sentinel" (Sentinel's own reach)


async def test_a_build_cannot_reach_a_model_its_caller_cannot(tmp_path: Path, openai_env) -> None:
    # dave may build, not call the model tool himself: nor may his build
    cfg = _principal_config(tmp_path, ["swarm__*"], openai_env.url)
    with http_sentinel(cfg) as (base, _):
        async with httpx2.AsyncClient(timeout=120) as http:
            task_id = await _started(http, base, DAVE)
            done = await _settled(http, base, DAVE, task_id)
    assert done["state"] == "FAILED", done
    assert openai_env.requests == [], "the build reached a model tool its caller cannot reach"
