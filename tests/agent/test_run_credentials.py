"""A phone agent run acts only while the credentials of the request that started it still hold.

What broke (red team "agentcheck14"): ``agent__agent_run`` runs up to its time cap, each step a call on the
phone made by the agent itself, with no check of the caller's credentials again: the holder of a leaked owner
token started a run, the owner rotated the token (``config token --rotate``), and the run went on tapping the
phone, as the owner, to its end. Now the run asks the request's check before each model decision and before
each of its calls (and the gateway asks it again right before the call is sent): a lapsed one ends the run
``credentials_lapsed``, nothing further reaches the phone, and one audit row says so.

Real parts: the gateway in a subprocess over HTTP, its simulated phone, the scripted model server over HTTP
(the model's first decision is held until the token has been rotated: deterministic, by events, no sleeps
that decide anything).
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from pathlib import Path

import httpx2
import pytest
from tests.agent.audit_rows import audit_rows
from tests.a2a.a2a_rig import user_message
from tests.agent.phone_policies import act, screen_of
from tests.identity.identity_rig import http_sentinel
from tests.identity.test_revoked_queued_calls import META
from tests.identity.test_secret_rotation import _cli, _mcp_status

from sentinel_mcp.paths import RULEBASES_DIR
from tests.support.followed_token import followed_owner_token

pytestmark = pytest.mark.timeout(180)
FAST_OPENAI = {"timeout": 30.0, "backoff_base": 0.01, "max_attempts": 1, "model": "scripted-1"}


def _config(tmp_path: Path) -> Path:
    cfg = tmp_path / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {}, "sentinel": {
        "data_dir": str(tmp_path / "state"), "builtins": ["device", "agent"],
        "rulebases": [str(RULEBASES_DIR / "default.pl"), str(RULEBASES_DIR / "device.pl")],
        "device": {"backend": "simulated", "risk_classifier": False},
        # the owner may start runs over A2A too (a peer's task offer, the owner's own agent)
        "agent": {"backend": "openai", "openai": FAST_OPENAI, "a2a_peers": ["owner"]},
        "a2a": {"name": f"agentcheck-{uuid.uuid4().hex[:8]}", "advertise": False, "task_db": ""}}}))
    return cfg


def _held_home(body: dict) -> dict:
    """The first decision (go to the home screen), answered only once the test releases it."""
    return {"hold": True, "content": act("home", screen_of(body)[0], why="start from the home screen")}


def _done(body: dict) -> str:
    return act("done", screen_of(body)[0], text="on the home screen")


async def _tool(http: httpx2.AsyncClient, base: str, token: str, name: str, arguments: dict) -> dict | None:
    """The call's result (None: its answer was refused, 401: the token no longer holds)."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": META}}
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name,
               "Authorization": f"Bearer {token}"}
    r = await http.post(f"{base}/mcp", json=body, headers=headers)
    if r.status_code == 401:
        return None
    assert r.status_code == 200, r.text
    text = r.text
    if text.startswith("event:") or "\ndata:" in text or text.startswith("data:"):
        text = [line[5:] for line in text.splitlines() if line.startswith("data:")][-1]
    return json.loads(text)["result"]


async def _a2a(http: httpx2.AsyncClient, base: str, token: str, method: str, params: dict) -> dict | None:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    r = await http.post(f"{base}/a2a", json=body,
                        headers={"A2A-Version": "1.0", "Authorization": f"Bearer {token}"})
    if r.status_code == 401:
        return None
    assert r.status_code == 200, r.text
    return r.json()["result"]


async def _started_over_a2a(http: httpx2.AsyncClient, base: str, token: str) -> str:
    message = user_message({"text": "go to the home screen"})
    sent = await _a2a(http, base, token, "SendMessage",
                      {"message": message, "configuration": {"returnImmediately": True}})
    assert sent is not None
    return sent["task"]["id"]


async def _a2a_settled(http: httpx2.AsyncClient, base: str, token: str, task_id: str) -> dict:
    for _ in range(600):  # bounded count of looks
        task = await _a2a(http, base, token, "GetTask", {"id": task_id})
        assert task is not None
        if task["status"]["state"] not in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"):
            return task
        await asyncio.sleep(0.05)
    raise AssertionError(f"task {task_id} never ended: {task['status']}")


@pytest.mark.parametrize(("entry", "rotate"), [("mcp", True), ("mcp", False), ("a2a", True)])
async def test_a_run_stops_when_the_token_that_started_it_is_rotated(
    tmp_path: Path, openai_env, entry: str, rotate: bool
) -> None:
    openai_env.script("unknown", _held_home, _done)
    cfg = _config(tmp_path)
    token = _cli(cfg, "token").stdout.strip()
    assert token, "no owner token"
    with http_sentinel(cfg) as (base, _):
        async with httpx2.AsyncClient(timeout=150) as http:
            goal = {"goal": "go to the home screen"}
            if entry == "mcp":
                run = asyncio.ensure_future(_tool(http, base, token, "agent__agent_run", goal))
            else:  # a task on the A2A endpoint: it runs the agent, and answers at once
                run = asyncio.ensure_future(_started_over_a2a(http, base, token))
            for _ in range(1200):  # the run has read the screen and waits for the model's first decision
                if any(r.get("held") for r in openai_env.requests) or (entry == "mcp" and run.done()):
                    break
                await asyncio.sleep(0.05)
            assert any(r.get("held") for r in openai_env.requests), (run.done() and run.result())
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
            answered = await run
            if entry == "a2a":  # the task, read by its owner with the token they hold now
                task = await _a2a_settled(http, base, now, answered)
                assert task["status"]["state"] == "TASK_STATE_FAILED", task["status"]
                assert "credentials_lapsed" in json.dumps(task), task
                answered = None
            # the run as its owner reads it back, with the token they hold now
            runs = await _tool(http, base, now, "agent__agent_runs", {})
    assert runs is not None
    listed = (runs.get("structuredContent") or {}).get("runs") or []
    assert len(listed) == 1, runs
    data = listed[0]
    # the gateway has stopped: its audit log can be read
    device = audit_rows(cfg.parent / "state", "tool, outcome", "tool LIKE 'device__%' ORDER BY id")
    lapsed = audit_rows(cfg.parent / "state", "tool, principal, origin, reason",
                        "outcome = 'credentials_lapsed'")
    if not rotate:  # the same run, its token still good: it acts and ends as the model says
        assert answered is not None and not answered.get("isError"), answered
        assert data.get("status") == "completed", data
        assert ("device__press_home", "ok") in device, device
        assert len(openai_env.requests) > asked and lapsed == []
        return
    # the answer to the rotated token: withheld (401) once a second has passed since its request
    # (app/stream_recheck.py), else it says the run stopped
    assert answered is None or (answered.get("structuredContent") or {}).get("status") == "credentials_lapsed"
    assert data.get("status") == "credentials_lapsed", data
    assert "no longer hold" in data["reason"], data["reason"]
    # nothing further reached the phone: only the screen read before the rotation
    assert [tool for tool, _ in device] == ["device__screen_read"], device
    assert len(openai_env.requests) == asked, "the run of a rotated token asked the model again"
    assert token not in json.dumps(data)
    assert len(lapsed) == 1, lapsed
    tool, principal, origin, reason = lapsed[0]
    assert (tool, principal, origin) == ("agent__agent_run", "owner", "builtin"), lapsed
    assert data["run_id"] in reason, reason


async def test_a_step_the_gateway_refuses_for_lapsed_credentials_ends_the_run(
    tmp_path: Path, openai_env
) -> None:
    """The window between the run's own look and the send: the token is rotated right after the run's look
    before its first action (the first look once the model has answered), so the gateway's look right before
    sending is the first to see it. The call is not sent, its row says ``credentials_lapsed``, and that row is
    the one (the run writes no second)."""
    from sentinel_mcp.app.runtime import running_gateway
    from sentinel_mcp.config import parse_config
    from sentinel_mcp.identity import owner_token
    from sentinel_mcp.identity.credential_stamp import CredentialCheck
    from sentinel_mcp.identity.credentials import Credentials
    from sentinel_mcp.identity.principal import Principal
    from sentinel_mcp.identity.resolver import Authenticator, TokenResolver

    openai_env.script("unknown", lambda body: act("home", screen_of(body)[0]), _done)
    keys = tmp_path / "keys"
    source, token = followed_owner_token(keys)
    tokens = TokenResolver()
    owner = Principal("owner", "token")
    tokens.follow(owner, source)
    request_check = CredentialCheck(Authenticator([tokens]), Credentials(bearer=token), owner)
    asked: list[str] = []

    def check():  # noqa: ANN202 - the request's own check, the rotation timed by the model's answer
        found = request_check()
        if openai_env.replies and not asked:  # the run's look before its first action: rotate after it
            asked.append("rotated")
            owner_token.replace(keys)
        return found

    config = parse_config({"mcpServers": {}, "sentinel": {
        "data_dir": str(tmp_path), "builtins": ["device", "agent"],
        "rulebases": [str(RULEBASES_DIR / "default.pl"), str(RULEBASES_DIR / "device.pl")],
        "device": {"backend": "simulated", "risk_classifier": False},
        "agent": {"backend": "openai", "openai": FAST_OPENAI}}}, source="<test>", base_dir=tmp_path)
    async with running_gateway(config) as rt:
        outcome = await rt.gateway.invoke("agent__agent_run", {"goal": "go to the home screen"},
                                          session_id="s-1", client="t", origin="client", recheck=check)
    assert asked == ["rotated"]
    data = outcome.result.structured_content or {}  # type: ignore[union-attr]
    assert data.get("status") == "credentials_lapsed", data
    assert "no longer hold" in data["reason"], data["reason"]
    assert len(openai_env.requests) == 1  # no model call after it
    device = audit_rows(tmp_path, "tool, outcome", "tool LIKE 'device__%' ORDER BY id")
    assert device == [("device__screen_read", "ok"), ("device__press_home", "credentials_lapsed")], device
    lapsed = audit_rows(tmp_path, "tool", "outcome = 'credentials_lapsed'")
    assert lapsed == [("device__press_home",)], lapsed

if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
