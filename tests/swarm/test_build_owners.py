"""Builds belong to the principal that started them: through a real Sentinel over HTTP, another principal
cannot
list, read (status or files, as tools or ``swarm://`` resources, by guessing ids) or cancel them; the owner of
a
build sees it all."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, AsyncIterator

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from tests.swarm.support.scripted_model import SPEC
from tests.swarm.support.swarm_fixtures import FAST_OPENAI, NO_TOOLS

TESTS = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("sentinel_tests_root_conftest_swarm", TESTS / "conftest.py")
assert _spec is not None and _spec.loader is not None
_root = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_root)

pytestmark = pytest.mark.timeout(180)
ALICE, BOB = "alice-token-0123456789abcdef", "bob-token-0123456789abcdef00"
MANIFEST = "app/src/main/AndroidManifest.xml"


@contextlib.contextmanager
def sentinel(tmp_path: Path, model_url: str, **swarm: Any):
    cfg = tmp_path / "sentinel.json"
    cfg.write_text(
        json.dumps(
            {
                "mcpServers": {},
                "sentinel": {
                    "data_dir": str(tmp_path / "state"),
                    "builtins": ["swarm"],
                    "policy": {"allow": ["swarm__*"]},
                    "principals": [{"name": "alice", "token": ALICE}, {"name": "bob", "token": BOB}],
                    "swarm": {"verify": NO_TOOLS, "backend": "openai", "openai": FAST_OPENAI} | swarm,
                },
            }
        )
    )
    port = _root.free_port()
    env = {**os.environ, "SWARM_OPENAI_BASE_URL": model_url, "SWARM_OPENAI_API_KEY": "test-key"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env=env,
    )
    try:
        _root.wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc, timeout=60)
        yield f"http://127.0.0.1:{port}"
    finally:
        _root.stop_process(proc)


@contextlib.asynccontextmanager
async def client(base: str, token: str, mode: str) -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    async with Client(streamable_http_client(f"{base}/mcp", http_client=http), mode=mode) as c:
        yield c


def body(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


async def test_builds_are_their_principals_own(tmp_path, model_server) -> None:
    with sentinel(tmp_path, model_server.url) as base:
        async with client(base, ALICE, "auto") as alice, client(base, BOB, "legacy") as bob:
            started = await alice.call_tool("swarm__swarm_build", {"spec": SPEC})
            assert not started.is_error, body(started)
            task_id = started.structured_content["task_id"]
            with anyio.fail_after(60):
                while True:
                    status = json.loads((await alice.read_resource(f"swarm://{task_id}")).contents[0].text)
                    if status["state"] in ("COMPLETED", "FAILED"):
                        break
                    await anyio.sleep(0.1)
            assert status["state"] == "COMPLETED", status
            mine = await alice.call_tool("swarm__swarm_list", {})
            assert [t["task_id"] for t in mine.structured_content["tasks"]] == [task_id]
            manifest = await alice.read_resource(f"swarm://{task_id}/{MANIFEST}")
            assert "android.intent.action.MAIN" in manifest.contents[0].text

            # bob: nothing of alice's, by any road
            listed = await bob.call_tool("swarm__swarm_list", {"limit": 200})
            assert listed.structured_content["tasks"] == []
            for tool in ("swarm__swarm_status", "swarm__swarm_cancel"):
                r = await bob.call_tool(tool, {"task_id": task_id})
                assert r.is_error and "AndroidManifest" not in body(r) and SPEC["app_name"] not in body(r), (
                    tool
                )
            for uri in (
                f"swarm://{task_id}",
                f"swarm://{task_id}/{MANIFEST}",
                f"swarm://{task_id}/./{MANIFEST}",
                f"swarm://{task_id.upper()}",
                f"swarm://{task_id}%2F{MANIFEST}",
            ):
                with pytest.raises(Exception) as refused:
                    await bob.read_resource(uri)
                assert "android.intent.action.MAIN" not in str(refused.value), uri
            still = json.loads((await alice.read_resource(f"swarm://{task_id}")).contents[0].text)
            assert still["state"] == "COMPLETED"  # bob's cancel did nothing


async def test_a_caller_kept_waiting_by_another_principals_build_is_not_told_its_id(
    tmp_path, model_server
) -> None:
    """While alice's build held the one build slot, bob's swarm_build was refused with "a build is already
    running (task <alice's id>, pid <the gateway's pid>)": another principal's task id and the process id.
    Now bob hears only that another build runs; alice, asking again, still hears her own build's id."""
    model_server.hold.clear()  # alice's planner call waits: her build holds the slot
    with sentinel(tmp_path, model_server.url) as base:
        async with client(base, ALICE, "auto") as alice, client(base, BOB, "legacy") as bob:
            started = await alice.call_tool("swarm__swarm_build", {"spec": SPEC})
            assert not started.is_error, body(started)
            task_id = started.structured_content["task_id"]
            for spec in (SPEC, dict(SPEC, app_name="Other"), dict(SPEC, features=["one thing"])):
                refused = await bob.call_tool("swarm__swarm_build", {"spec": spec})
                assert refused.is_error and "another build is running" in body(refused)
                assert task_id not in body(refused) and "pid" not in body(refused)
                assert task_id[:-6] not in body(refused)  # not even its start time
            own = await alice.call_tool("swarm__swarm_build", {"spec": SPEC})
            assert own.is_error and task_id in body(own)
            await alice.call_tool("swarm__swarm_cancel", {"task_id": task_id})
            model_server.hold.set()


async def test_a_principal_starts_at_most_its_builds_per_hour_and_others_still_build(
    tmp_path, model_server
) -> None:
    """One principal could start builds back to back without end: with a client's own model answering at
    once, 121 one-call builds in 20 s (10 MB of workspaces and audit rows, each kept for days), holding the
    one build slot so that every other principal's build was refused. Now each principal may start
    max_builds_per_hour builds within any hour, whatever it builds or asks; others are not counted."""
    with sentinel(tmp_path, model_server.url, max_builds_per_hour=3) as base:
        async with client(base, ALICE, "auto") as alice, client(base, BOB, "legacy") as bob:
            for spec, caps in (
                (SPEC, {"max_model_calls": 1}),
                (dict(SPEC, app_name="Second"), {"max_steps": 10}),
                (dict(SPEC, features=["one thing"]), {"max_tokens": 50}),
            ):
                done = await bob.call_tool("swarm__swarm_build", {"spec": spec, "wait": True, **caps})
                assert not done.is_error and done.structured_content["state"] in ("COMPLETED", "FAILED")
            for args in ({"spec": SPEC}, {"spec": SPEC, "wait": True}, {"spec": SPEC, "max_model_calls": 1}):
                refused = await bob.call_tool("swarm__swarm_build", args)
                assert refused.is_error and "the most one caller may (3)" in body(refused), body(refused)
            listed = await bob.call_tool("swarm__swarm_list", {"limit": 200})
            assert len(listed.structured_content["tasks"]) == 3  # the refused ones were never started
            mine = await alice.call_tool("swarm__swarm_build", {"spec": SPEC, "wait": True})
            assert not mine.is_error and mine.structured_content["state"] == "COMPLETED", body(mine)


async def test_a_caller_is_never_told_where_the_gateway_keeps_builds_on_its_disk(
    tmp_path, model_server
) -> None:
    """swarm_build answered with the workspace's absolute path on the gateway's disk (its data directory,
    the account's home), and so did swarm_status, the swarm:// status, the waiting build's summary and its
    last progress message: a remote principal learnt the server's file layout. Now the workspace is named
    by its swarm:// address; the files are read through it."""
    state = str(tmp_path / "state")
    messages: list[str] = []

    async def progress(_done: float, _total: float | None, message: str | None) -> None:
        messages.append(message or "")

    with sentinel(tmp_path, model_server.url) as base:
        async with client(base, ALICE, "auto") as alice:
            started = await alice.call_tool("swarm__swarm_build", {"spec": SPEC})
            task_id = started.structured_content["task_id"]
            waited = await alice.call_tool(
                "swarm__swarm_build", {"spec": dict(SPEC, app_name="Second"), "wait": True},
                progress_callback=progress,
            )
            assert waited.is_error and "already running" in body(waited)  # the first one still runs
            with anyio.fail_after(60):
                while json.loads((await alice.read_resource(f"swarm://{task_id}")).contents[0].text)[
                    "state"
                ] not in ("COMPLETED", "FAILED"):
                    await anyio.sleep(0.1)
            waited = await alice.call_tool(
                "swarm__swarm_build", {"spec": dict(SPEC, app_name="Second"), "wait": True},
                progress_callback=progress,
            )
            assert not waited.is_error and waited.structured_content["state"] == "COMPLETED"
            answers = [
                body(started),
                body(waited),
                body(await alice.call_tool("swarm__swarm_status", {"task_id": task_id})),
                (await alice.read_resource(f"swarm://{task_id}")).contents[0].text,
                body(await alice.call_tool("swarm__swarm_list", {})),
                *messages,
            ]
            assert messages and any("completed" in m for m in messages)
            for answer in answers:
                assert state not in answer and str(tmp_path) not in answer, answer[:300]
            assert started.structured_content["workspace"] == f"swarm://{task_id}/"
