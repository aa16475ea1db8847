"""Real replicas (two ``sentinel-mcp serve --http`` processes on one PostgreSQL): an A2A task started on A is
read on B by the principal that made it and by nobody else (and the same message sent to B is answered
with it, nothing run again); a task waiting for input on A is answered through
B
(B takes it over, the call runs once, A's late answer runs nothing); A killed with ``kill -9`` mid-task: B
ends
the task FAILED, saying replica A stopped, and the tool call it was making ran once (never again, never lost).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any, AsyncIterator

import httpx2
import pytest

from examples.cluster.recipe import Cluster, wait_ok
from sentinel_mcp.paths import RULEBASES_DIR
from tests.records.rig import AUTH, TOKEN

pytestmark = pytest.mark.timeout(240)
SLOW = str(Path(__file__).with_name("slow_upstream.py"))
KEYS = {"alice": "alice-token-0123456789", "bob": "bob-token-0123456789ab"}  # two principals' tokens
# slow__work is allowed (this test is about where tasks live); asks__work asks a question an agent may answer
RULES = """
guard('slow__work', [mark = _], true).
guard('slow2__work', [mark = _], true).
askable(colour(M, C), "Which colour for ~w?", choice([red, green, blue]), [from([user, agent])]).
guard('asks__work', [mark = M], colour(M, _)).
"""


def base_config(tmp: Path) -> dict[str, Any]:
    rules = tmp / "allow.pl"
    rules.write_text(RULES)
    upstream = {
        "command": sys.executable,
        "args": [SLOW],
        "env": {"SLOW_LOG": str(tmp / "work.log")},
        "timeout": 120,
    }
    return {
        "mcpServers": {"slow": upstream, "slow2": upstream, "asks": upstream},  # one call at a time each
        "sentinel": {
            "builtins": [],
            "http": {"token": TOKEN},
            "rulebases": [str(RULEBASES_DIR / "default.pl"), str(rules)],
            "principals": [{"name": who, "token": token} for who, token in KEYS.items()],
            "a2a": {"task_lease_seconds": 2.0, "task_lease_renew_seconds": 0.3},
        },
    }


async def rpc(
    http: httpx2.AsyncClient, port: int, who: str, method: str, params: dict[str, Any]
) -> dict[str, Any]:
    r = await http.post(
        f"http://127.0.0.1:{port}/a2a",
        headers={"Authorization": f"Bearer {KEYS[who]}"},
        json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
    )
    assert r.status_code == 200, r.text
    return r.json()


def call(tool: str, mark: str) -> dict[str, Any]:
    return {
        "messageId": str(uuid.uuid4()),
        "role": "ROLE_USER",
        "parts": [
            {"data": {"type": "tool_call", "tool_call_id": "w1", "name": tool, "args": {"mark": mark}}}
        ],
    }


async def first_streamed(http: httpx2.AsyncClient, port: int, who: str, task_id: str) -> dict[str, Any]:
    async with stream(http, port, who, task_id) as frames:
        return await anext(frames)


@contextlib.asynccontextmanager
async def stream(
    http: httpx2.AsyncClient, port: int, who: str, task_id: str
) -> AsyncIterator[AsyncIterator[dict[str, Any]]]:
    """SubscribeToTask over SSE: the stream's results, one by one."""
    body = {"jsonrpc": "2.0", "id": 9, "method": "SubscribeToTask", "params": {"id": task_id}}
    headers = {"Authorization": f"Bearer {KEYS[who]}"}
    async with http.stream("POST", f"http://127.0.0.1:{port}/a2a", json=body, headers=headers) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")

        async def frames() -> AsyncIterator[dict[str, Any]]:
            async for line in r.aiter_lines():
                if line.startswith("data:"):
                    frame = json.loads(line[5:])
                    assert "result" in frame, frame
                    yield frame["result"]

        yield frames()


def state_of(event: dict[str, Any]) -> str | None:
    if "task" in event:
        return event["task"]["status"]["state"]
    return event["statusUpdate"]["status"]["state"] if "statusUpdate" in event else None


def started(tmp: Path, mark: str) -> int:
    log = tmp / "work.log"
    return log.read_text().split().count("start:" + mark) if log.exists() else 0


async def test_a_task_is_read_anywhere_by_its_owner_and_a_killed_replicas_task_ends_once(pg_url: str) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-a2a-cluster-"))
    cluster = Cluster(tmp, base_config(tmp), store_url=pg_url)
    try:
        for name in ("replica-a", "replica-b"):
            cluster.start_replica(name)
        for name, port in cluster.ports.items():
            await asyncio.to_thread(wait_ok, port, 90.0, cluster.procs[name], AUTH)
        a, b = cluster.ports["replica-a"], cluster.ports["replica-b"]
        mark = uuid.uuid4().hex[:8]
        message = call("slow__work", mark)
        async with httpx2.AsyncClient(timeout=30) as http:
            sent = await rpc(
                http,
                a,
                "alice",
                "SendMessage",
                {"message": message, "configuration": {"returnImmediately": True}},
            )
            task_id = sent["result"]["task"]["id"]
            for _ in range(300):  # bounded: the upstream records that the call reached it
                if started(tmp, mark):
                    break
                await asyncio.sleep(0.1)
            assert started(tmp, mark) == 1
            # the same message again, through B (a retry, a replay): answered with A's task, nothing runs
            replay = await rpc(http, b, "alice", "SendMessage",
                               {"message": message, "configuration": {"returnImmediately": True}})
            assert replay["result"]["task"]["id"] == task_id, replay

            seen = await rpc(
                http, b, "alice", "GetTask", {"id": task_id}
            )  # another replica, the same principal
            assert seen["result"]["status"]["state"] == "TASK_STATE_WORKING", seen
            listed = await rpc(http, b, "alice", "ListTasks", {})
            assert [t["id"] for t in listed["result"]["tasks"]] == [task_id]
            for port in (a, b):  # another principal: no such task, on either replica
                other = await rpc(http, port, "bob", "GetTask", {"id": task_id})
                assert "result" not in other and other["error"]["code"] == -32001, other
                assert (await rpc(http, port, "bob", "ListTasks", {}))["result"]["tasks"] == []
            first = await first_streamed(http, b, "alice", task_id)  # B streams A's running task
            assert first["task"]["status"]["state"] == "TASK_STATE_WORKING", first

            # a task waiting for input on A, answered through B: B takes it over and runs the call once; A's
            # late answer to the same question runs nothing
            asked = "ask" + uuid.uuid4().hex[:8]
            (tmp / f"work.log.release-{asked}").touch()
            waiting = await rpc(http, a, "alice", "SendMessage", {"message": call("asks__work", asked)})
            waiting = waiting["result"]["task"]
            assert waiting["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", waiting
            key = next(
                p["data"]
                for p in waiting["status"]["message"]["parts"]
                if p.get("data", {}).get("type") == "input_request"
            )["questions"][0]["key"]
            answer = {
                "messageId": str(uuid.uuid4()),
                "role": "ROLE_USER",
                "taskId": waiting["id"],
                "parts": [{"data": {"answers": {key: {"action": "accept", "content": {"answer": "red"}}}}}],
            }
            bob_try = await rpc(http, b, "bob", "SendMessage", {"message": answer})  # not bob's: no such task
            assert bob_try["error"]["code"] == -32001, bob_try
            done = await rpc(http, b, "alice", "SendMessage", {"message": answer})
            assert done["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", done
            answer["messageId"] = str(uuid.uuid4())
            late = await rpc(http, a, "alice", "SendMessage", {"message": answer})
            assert "error" in late and "result" not in late, late
            assert started(tmp, asked) == 1
            again_on_a = (await rpc(http, a, "alice", "GetTask", {"id": waiting["id"]}))["result"]
            assert again_on_a["status"]["state"] == "TASK_STATE_COMPLETED"

            os.killpg(cluster.procs["replica-a"].pid, signal.SIGKILL)  # A and its upstream, mid-call
            cluster.procs["replica-a"].wait(10)
            ended: dict[str, Any] = {}
            for _ in range(300):  # bounded: the lease is 2 s, B sweeps every 0.3 s
                ended = (await rpc(http, b, "alice", "GetTask", {"id": task_id}))["result"]
                if ended["status"]["state"] != "TASK_STATE_WORKING":
                    break
                await asyncio.sleep(0.1)
            assert ended["status"]["state"] == "TASK_STATE_FAILED", ended
            reason = ended["status"]["message"]["parts"][0]["text"]
            assert reason.startswith("interrupted: replica replica-a stopped") and "not run again" in reason

            # a restarted A does not run it again either; the call ran exactly once in all
            cluster.start_replica("replica-a")
            await asyncio.to_thread(wait_ok, a, 90.0, cluster.procs["replica-a"], AUTH)
            again = (await rpc(http, a, "alice", "GetTask", {"id": task_id}))["result"]
            assert again["status"]["state"] == "TASK_STATE_FAILED"
            assert started(tmp, mark) == 1

            # B still runs new tasks: released at once, completed, recorded once
            (tmp / "work.log.release").touch()
            second = uuid.uuid4().hex[:8]
            done = await rpc(http, b, "alice", "SendMessage", {"message": call("slow__work", second)})
            assert done["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", done
            assert started(tmp, second) == 1 and started(tmp, mark) == 1
    finally:
        await asyncio.to_thread(cluster.down)


async def test_a_running_task_is_cancelled_and_streamed_through_another_replica(pg_url: str) -> None:
    """A task running on A: B streams it (its completion and result arrive through the shared store) and
    cancels it (A stops it: CANCELED everywhere, its call run once, a late result changes nothing); a task
    that finished first is not cancelable; another principal cancels nothing."""
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-a2a-cancel-"))
    cluster = Cluster(tmp, base_config(tmp), store_url=pg_url)
    try:
        for name in ("replica-a", "replica-b"):
            cluster.start_replica(name)
        for name, port in cluster.ports.items():
            await asyncio.to_thread(wait_ok, port, 90.0, cluster.procs[name], AUTH)
        a, b = cluster.ports["replica-a"], cluster.ports["replica-b"]
        async with httpx2.AsyncClient(timeout=60) as http:

            async def start_on_a(server: str, mark: str) -> str:
                message = call(f"{server}__work", mark)
                sent = await rpc(http, a, "alice", "SendMessage",
                                 {"message": message, "configuration": {"returnImmediately": True}})
                for _ in range(300):  # bounded: the upstream records that the call reached it
                    if started(tmp, mark):
                        break
                    await asyncio.sleep(0.1)
                assert started(tmp, mark) == 1
                return sent["result"]["task"]["id"]

            streamed, cancelled = uuid.uuid4().hex[:8], uuid.uuid4().hex[:8]
            t1, t2 = await start_on_a("slow", streamed), await start_on_a("slow2", cancelled)

            # another principal: no such task to cancel or stream, on either replica
            for port in (a, b):
                for method in ("CancelTask", "SubscribeToTask"):
                    other = await rpc(http, port, "bob", method, {"id": t2})
                    assert other["error"]["code"] == -32001, other

            cancel = await rpc(http, b, "alice", "CancelTask", {"id": t2})
            assert cancel["result"]["status"]["state"] == "TASK_STATE_CANCELED", cancel
            for port in (a, b):
                seen = (await rpc(http, port, "alice", "GetTask", {"id": t2}))["result"]
                assert seen["status"]["state"] == "TASK_STATE_CANCELED", seen
            (tmp / f"work.log.release-{cancelled}").touch()  # the upstream finishes: too late to count
            for _ in range(100):
                if f"done:{cancelled}" in (tmp / "work.log").read_text():
                    break
                await asyncio.sleep(0.1)
            await asyncio.sleep(0.5)
            assert (await rpc(http, a, "alice", "GetTask", {"id": t2}))["result"]["status"]["state"] == (
                "TASK_STATE_CANCELED"
            )
            again = await rpc(http, b, "alice", "CancelTask", {"id": t2})
            assert again["error"]["code"] == -32002, again  # not cancelable: it ended
            assert started(tmp, cancelled) == 1

            async with stream(http, b, "alice", t1) as frames:
                first = await anext(frames)
                assert state_of(first) == "TASK_STATE_WORKING", first
                (tmp / f"work.log.release-{streamed}").touch()
                rest = [event async for event in frames]  # the stream ends by itself
            assert state_of(rest[-1]) == "TASK_STATE_COMPLETED", rest
            artifacts = [e["artifactUpdate"]["artifact"] for e in rest if "artifactUpdate" in e]
            assert any(f"done:{streamed}" in json.dumps(x) for x in artifacts), rest
            late = await rpc(http, b, "alice", "CancelTask", {"id": t1})
            assert late["error"]["code"] == -32002 and "COMPLETED" in late["error"]["message"], late
            assert started(tmp, streamed) == 1
    finally:
        await asyncio.to_thread(cluster.down)


async def test_a_context_is_one_conversation_on_every_replica(pg_url: str) -> None:
    """A peer's A2A context names the same conversation on every replica (its answers count on each), and
    only for that peer: a fact answered in a task on A decides a new task of the same context on B; another
    context, or another principal using the same context id, is asked again."""
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-a2a-context-"))
    (tmp / "work.log.release").touch()  # every call finishes at once
    cluster = Cluster(tmp, base_config(tmp), store_url=pg_url)
    try:
        for name in ("replica-a", "replica-b"):
            cluster.start_replica(name)
        for name, port in cluster.ports.items():
            await asyncio.to_thread(wait_ok, port, 90.0, cluster.procs[name], AUTH)
        a, b = cluster.ports["replica-a"], cluster.ports["replica-b"]
        context = f"trip-{uuid.uuid4()}"

        def in_context(mark: str, ctx: str) -> dict[str, Any]:
            return {**call("asks__work", mark), "contextId": ctx}

        async with httpx2.AsyncClient(timeout=60) as http:
            first = (await rpc(http, a, "alice", "SendMessage", {"message": in_context("m1", context)}))
            task = first["result"]["task"]
            assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task
            key = next(p["data"] for p in task["status"]["message"]["parts"]
                       if p.get("data", {}).get("type") == "input_request")["questions"][0]["key"]
            red = {key: {"action": "accept", "content": {"answer": "red"}}}
            answer = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "taskId": task["id"],
                      "parts": [{"data": {"answers": red}}]}
            done = await rpc(http, a, "alice", "SendMessage", {"message": answer})
            assert done["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", done

            # the same context on B: the colour answered on A decides there, nothing is asked
            again = await rpc(http, b, "alice", "SendMessage", {"message": in_context("m1", context)})
            assert again["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", again
            # another principal with the same context id, and alice's other context: asked
            for who, ctx in (("bob", context), ("alice", f"other-{uuid.uuid4()}")):
                other = await rpc(http, b, who, "SendMessage", {"message": in_context("m1", ctx)})
                assert other["result"]["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", (who, other)
        assert started(tmp, "m1") == 2
    finally:
        await asyncio.to_thread(cluster.down)
