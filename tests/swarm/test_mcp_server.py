"""The swarm built-in through the real mcp.Client in-process, in both protocol eras."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError
from mcp.client import ClientRequestContext
from mcp.types import CreateMessageRequestParams, CreateMessageResult, TextContent
from tests.swarm.support.scripted_model import (
    EDITOR_ACTIVITY,
    MODEL_STEPS,
    PLAN_PATHS,
    SPEC,
    default_entry,
    role_of,
)
from tests.swarm.support.swarm_fixtures import FAST_OPENAI, NO_TOOLS

from sentinel_mcp.config import ConfigError
from sentinel_mcp.core.builtin import BuiltinContext
from sentinel_mcp.swarm.server import create_server

pytestmark = pytest.mark.timeout(60)
MANIFEST = "app/src/main/AndroidManifest.xml"


def swarm(tmp_path: Path, **section: Any):
    settings = {"backend": "openai", "openai": FAST_OPENAI, "verify": NO_TOOLS} | section
    return create_server(BuiltinContext(name="swarm", data_dir=tmp_path / "swarm", settings=settings))


def data(result) -> dict[str, Any]:
    assert not result.is_error, result.content
    sc = result.structured_content
    return sc.get("result", sc) if isinstance(sc, dict) and set(sc) == {"result"} else sc


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_build_with_progress_then_status_list_and_files(tmp_path, openai_env, mode) -> None:
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(p: float, total: float | None, message: str | None) -> None:
        progress.append((p, total, message))

    async with Client(swarm(tmp_path), mode=mode) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == {"swarm_validate", "swarm_build", "swarm_status", "swarm_list", "swarm_cancel"}
        assert tools["swarm_status"].annotations.read_only_hint is True
        assert tools["swarm_validate"].annotations.read_only_hint is True
        result = data(
            await client.call_tool("swarm_build", {"spec": SPEC, "wait": True}, progress_callback=on_progress)
        )
        assert result["state"] == "COMPLETED" and sorted(result["files"]) == sorted(PLAN_PATHS)
        task_id = result["task_id"]

        messages = [m for _, _, m in progress]
        assert messages[0] == "[PLANNING] planning"
        assert f"[EXECUTING] step 10 accepted: {EDITOR_ACTIVITY}" in messages
        assert "[EXECUTING] step 1 written: settings.gradle.kts" in messages
        assert messages[-1].startswith(f"[COMPLETED] completed: {len(PLAN_PATHS)} files")
        assert progress[-1][:2] == (len(PLAN_PATHS) + 2, len(PLAN_PATHS) + 2)
        assert [p for p, _, _ in progress] == sorted(p for p, _, _ in progress)  # progress only grows

        status = data(await client.call_tool("swarm_status", {"task_id": task_id}))
        assert status["state"] == "COMPLETED" and len(status["steps"]) == len(PLAN_PATHS)
        listed = data(await client.call_tool("swarm_list", {}))
        assert [t["task_id"] for t in listed["tasks"]] == [task_id]

        templates = await client.list_resource_templates()
        assert sorted(t.uri_template for t in templates.resource_templates) == [
            "swarm://{task_id}",
            "swarm://{task_id}/{+path}",
        ]
        read = await client.read_resource(f"swarm://{task_id}/{MANIFEST}")
        assert read.contents[0].text == (tmp_path / "swarm" / task_id / MANIFEST).read_text()
        state = json.loads((await client.read_resource(f"swarm://{task_id}")).contents[0].text)
        assert state["state"] == "COMPLETED" and state["model_calls"] == 2 + 2 * MODEL_STEPS


async def test_build_returns_at_once_and_cancel_through_mcp(tmp_path, openai_env) -> None:
    openai_env.hold.clear()
    async with Client(swarm(tmp_path)) as client:
        started = data(await client.call_tool("swarm_build", {"spec": SPEC}))
        task_id = started["task_id"]
        assert started["state"] == "PLANNING" and started["files"] == f"swarm://{task_id}/<path>"
        assert started["status"] == f"swarm://{task_id}" and started["backend"] == "openai"
        busy = await client.call_tool("swarm_build", {"spec": SPEC})
        assert busy.is_error and "a build is already running" in busy.content[0].text
        cancelled = data(await client.call_tool("swarm_cancel", {"task_id": task_id}))
        assert cancelled == {"task_id": task_id, "cancelled": True, "state": "FAILED", "error": "cancelled"}
        openai_env.hold.set()
        status = data(await client.call_tool("swarm_status", {"task_id": task_id}))
        assert status["state"] == "FAILED" and status["spec"]["app_name"] == "Notes"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_cancelling_a_waiting_call_cancels_the_build(tmp_path, openai_env, mode) -> None:
    openai_env.script("coder", {"hold": True})
    async with Client(swarm(tmp_path), mode=mode) as client:
        async with anyio.create_task_group() as tg:

            async def build() -> None:
                await client.call_tool("swarm_build", {"spec": SPEC, "wait": True})

            tg.start_soon(build)
            while not any(r.get("held") for r in openai_env.requests):
                await anyio.sleep(0.01)
            tg.cancel_scope.cancel()  # the client gives up: notifications/cancelled reaches the tool
        openai_env.release.set()
        tasks: list[dict[str, Any]] = []
        with anyio.move_on_after(20):
            while True:
                tasks = data(await client.call_tool("swarm_list", {}))["tasks"]
                if tasks and tasks[0]["state"] == "FAILED":
                    break
                await anyio.sleep(0.01)
    assert tasks and tasks[0]["state"] == "FAILED", tasks
    assert tasks[0]["error"] == "cancelled" and not tasks[0]["running_here"]


async def test_closing_the_connection_fails_a_running_build(tmp_path, openai_env) -> None:
    openai_env.hold.clear()
    server = swarm(tmp_path)
    async with Client(server) as client:
        task_id = data(await client.call_tool("swarm_build", {"spec": SPEC}))["task_id"]
    openai_env.hold.set()
    async with Client(server) as client:
        status = data(await client.call_tool("swarm_status", {"task_id": task_id}))
    assert status["state"] == "FAILED" and status["error"] == "cancelled"


async def test_bad_input_gets_clear_errors(tmp_path, openai_env) -> None:
    async with Client(swarm(tmp_path)) as client:
        bad = await client.call_tool(
            "swarm_build", {"spec": {"app_name": "X", "package_name": "nodots", "features": ["a"]}}
        )
        assert bad.is_error
        assert "package_name: must be a lowercase dotted package" in bad.content[0].text
        over = await client.call_tool("swarm_build", {"spec": SPEC, "max_steps": 99})
        assert over.is_error and "max_steps" in over.content[0].text
        wrong_type = await client.call_tool("swarm_build", {"spec": "not an object"})
        assert wrong_type.is_error
        unknown = await client.call_tool("swarm_status", {"task_id": "t20260101-000000-abcdef"})
        assert unknown.is_error and "no such task" in unknown.content[0].text
        nasty = await client.call_tool("swarm_status", {"task_id": "../../etc"})
        assert nasty.is_error and "task_id" in nasty.content[0].text  # the schema's pattern refuses it
        for uri in (
            "swarm://t20260101-000000-abcdef/app/../../../etc/passwd",
            "swarm://t20260101-000000-abcdef/missing.kt",
        ):
            with pytest.raises(MCPError):
                await client.read_resource(uri)
        assert data(await client.call_tool("swarm_list", {})) == {"tasks": []}
    assert openai_env.requests == []


async def test_missing_endpoint_env_is_a_clear_error(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("SWARM_OPENAI_BASE_URL", raising=False)
    async with Client(swarm(tmp_path)) as client:
        r = await client.call_tool("swarm_build", {"spec": SPEC})
    assert r.is_error and "$SWARM_OPENAI_BASE_URL" in r.content[0].text


def test_settings_errors_name_the_key(tmp_path) -> None:
    with pytest.raises(
        ConfigError, match=r"sentinel.swarm.limits.max_model_calls: Input should be less than or equal to 80"
    ):
        swarm(tmp_path, limits={"max_model_calls": 81})
    with pytest.raises(
        ConfigError, match=r"sentinel.swarm.backend: Input should be 'auto', 'local', 'openai' or 'sampling'"
    ):
        swarm(tmp_path, backend="kimi")
    with pytest.raises(ConfigError, match=r"sentinel.swarm.colour: unknown key"):
        swarm(tmp_path, colour=1)


async def test_sampling_backend_through_the_calling_client(tmp_path) -> None:
    asked: list[str] = []

    async def sampling(
        context: ClientRequestContext, params: CreateMessageRequestParams
    ) -> CreateMessageResult:
        text = params.messages[0].content.text
        body = {
            "messages": [
                {"role": "system", "content": params.system_prompt},
                {"role": "user", "content": text},
            ]
        }
        asked.append(role_of(body))
        return CreateMessageResult(
            role="assistant",
            model="client-model",
            content=TextContent(type="text", text=default_entry(role_of(body), body)),
        )

    server = swarm(tmp_path, backend="sampling")
    async with Client(server, mode="legacy", sampling_callback=sampling) as client:
        result = data(await client.call_tool("swarm_build", {"spec": SPEC, "wait": True}))
    assert result["state"] == "COMPLETED", result["error"]
    assert asked == ["planner"] + ["coder", "critic"] * MODEL_STEPS + ["verifier"]
    assert result["backend"] == "sampling"
    async with Client(server) as client:  # 2026-07-28: no back channel, refused up front
        r = await client.call_tool("swarm_build", {"spec": SPEC, "wait": True})
        assert r.is_error and "speaks 2026-07-28" in r.content[0].text
    async with Client(server, mode="legacy") as client:  # no sampling capability offered
        r = await client.call_tool("swarm_build", {"spec": SPEC, "wait": True})
        assert r.is_error and "does not offer sampling" in r.content[0].text
    async with Client(
        server, mode="legacy", sampling_callback=sampling
    ) as client:  # asked during the call only
        r = await client.call_tool("swarm_build", {"spec": SPEC})
        assert r.is_error and "needs wait: true" in r.content[0].text


@pytest.mark.parametrize(
    "arguments",
    [
        {"max_steps": "3"},  # a text is no cap (the MCP layer read it as 3)
        {"max_steps": True},  # nor is a truth value (read as 1)
        {"max_model_calls": "10"},
        {"max_tokens": False},
        {"max_minutes": True},  # read as 1 minute
        {"max_minutes": "5"},
        {"wait": "false"},  # a text is no truth value either (a non-empty "false" read as false)
        {"wait": 1},
        {"max_steps": 2.5},
        {"max_steps": -1},
        {"max_tokens": 10**30},
    ],
)
async def test_a_cap_is_a_json_number_and_wait_a_json_boolean(tmp_path, openai_env, arguments) -> None:
    """Found by red team 'swarm' (rt-swarm): the caller's caps were read loosely ("3" and true as 3 and 1), so
    what the policy judged (a text, no number: `within_cap` refuses it) and what the build ran on were two
    readings of one argument. Each is read as JSON sent it, as the spec is; no build starts."""
    async with Client(swarm(tmp_path)) as client:
        refused = await client.call_tool("swarm_build", {"spec": SPEC, **arguments})
        assert refused.is_error, refused.content
        assert next(iter(arguments)) in refused.content[0].text
        assert data(await client.call_tool("swarm_list", {})) == {"tasks": []}
    assert openai_env.requests == []
