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
from tests.swarm.support.swarm_fixtures import FAST_OPENAI, NO_TOOLS, make_service, openai_factory
from tests.tls.tls_rig import audit_rows

from sentinel_mcp.identity.resolver import AuthFailed
from sentinel_mcp.swarm.build_credentials import BuildCredentials

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
    # the row reads as written: the build's id whole (no card number), its words unmasked (no secret's value)
    assert lapsed[0]["reason"].startswith(f"build {task_id}: the credentials this build was started with no "
                                          "longer hold ("), lapsed[0]["reason"]


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


# ---- the check itself: whatever way it fails, the build stops at once, with one row; never fails open ----


class _Flips:
    """Holds for ``holds`` asks, then raises ``error`` (every later ask too)."""

    def __init__(self, holds: int, error: BaseException | None) -> None:
        self.holds, self.error, self.asked = holds, error, 0

    def __call__(self) -> None:
        self.asked += 1
        if self.error is not None and self.asked > self.holds:
            raise self.error


@pytest.mark.parametrize("error", [AuthFailed("token replaced"), OSError("token file unreadable"),
                                   ValueError("x"), RuntimeError("\u202eevil\nline")])
@pytest.mark.parametrize("holds", [0, 1])
async def test_a_check_that_fails_in_any_way_stops_the_build(service, model_server, error, holds) -> None:
    rows: list[tuple[str, str]] = []

    async def recorded(task_id: str, reason: str) -> None:
        rows.append((task_id, reason))

    check = _Flips(holds, error)
    task_id = await service.submit(SPEC, openai_factory(model_server),
                                   credentials=BuildCredentials(check, recorded))
    done = await service.wait(task_id)
    assert done["state"] == "FAILED" and done["error"].startswith("credentials_lapsed:"), done["error"]
    assert "\u202e" not in done["error"] and "\nline" not in done["error"]
    assert len(model_server.requests) <= holds  # a model call is made only after the check held
    assert check.asked == holds + 1  # stopped at the first failed ask
    assert [t for t, _ in rows] == [task_id]  # one audit row


async def test_a_check_that_holds_lets_the_build_complete_and_is_asked_each_step(
    service, model_server
) -> None:
    check = _Flips(0, None)
    task_id = await service.submit(SPEC, openai_factory(model_server), credentials=BuildCredentials(check))
    done = await service.wait(task_id)
    assert done["state"] == "COMPLETED", done["error"]
    assert check.asked > len(model_server.requests) > 0  # every model call, and every step besides


async def test_at_whichever_ask_the_check_fails_the_build_stops_there(tmp_path, model_server) -> None:
    """Every point a build asks (each step, each model call: the critic's too, which otherwise fails open)."""
    service = make_service(tmp_path, {"max_builds_per_hour": 1000})  # one build per point it asks at
    await service.start(sweep=False)
    try:
        await _every_ask(service, model_server)
    finally:
        await service.close()


async def _every_ask(service, model_server) -> None:
    whole = _Flips(0, None)
    first = await service.submit(SPEC, openai_factory(model_server), credentials=BuildCredentials(whole))
    assert (await service.wait(first))["state"] == "COMPLETED"
    for holds in range(whole.asked):
        before = len(model_server.requests)
        check = _Flips(holds, AuthFailed("rotated"))
        task_id = await service.submit(
            SPEC, openai_factory(model_server), credentials=BuildCredentials(check)
        )
        done = await service.wait(task_id)
        assert done["state"] == "FAILED" and done["error"].startswith("credentials_lapsed:"), (holds, done)
        assert check.asked == holds + 1, holds  # nothing went on past the failed ask
        assert len(model_server.requests) - before <= holds


def test_a_calls_check_is_held_only_while_the_built_in_handles_it() -> None:
    from sentinel_mcp.core import caller_checks

    def first() -> None: ...

    def second() -> None: ...

    assert caller_checks.check_of("d1") is None and caller_checks.check_of("") is None
    with caller_checks.held("d1", first):
        assert caller_checks.check_of("d1") is first and caller_checks.check_of("d2") is None
        with caller_checks.held("d2", second):
            assert caller_checks.check_of("d2") is second
        assert caller_checks.check_of("d2") is None
        with pytest.raises(RuntimeError), caller_checks.held("d3", second):
            raise RuntimeError("the call failed")
        assert caller_checks.check_of("d3") is None
    assert caller_checks.check_of("d1") is None
