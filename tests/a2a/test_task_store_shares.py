"""One caller's flood of tasks cannot push out another caller's results, nor fill the gateway's memory with
its messages: when the store is full, a finished task of whoever holds the most goes first, and past its
share of bytes a caller makes room from its own finished tasks. Real HTTP on 127.0.0.1, two API keys."""

from __future__ import annotations

import httpx2
import pytest
from tests.a2a.a2a_rig import open_port, rpc, serve, user_message

from sentinel_mcp.a2a.settings import A2ASettings

pytestmark = pytest.mark.timeout(60)

ALICE = {"X-API-Key": "alice-key-123", "A2A-Version": "1.0"}
BOB = {"X-API-Key": "bobby-key-123", "A2A-Version": "1.0"}
KEYS = {"alice": "alice-key-123", "bob": "bobby-key-123"}


def _echo(text: str) -> dict:
    return {"data": {"type": "tool_call", "tool_call_id": "c", "name": "tools__echo", "args": {"text": text}}}


async def _alices_result(http: httpx2.AsyncClient, url: str) -> str:
    done = await rpc(http, url, "SendMessage", {"message": user_message(_echo("alice's"))}, headers=ALICE)
    assert done["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    return done["result"]["task"]["id"]


async def test_a_flood_of_tasks_evicts_the_flooders_own_results_not_anothers():
    settings = A2ASettings(name="t", max_tasks=20, api_keys=KEYS)
    async with open_port() as port, serve(port, settings) as srv, httpx2.AsyncClient(timeout=20) as http:
        kept = await _alices_result(http, srv.rpc_url)
        for _ in range(3 * settings.max_tasks):  # each is REJECTED at once: a finished task
            out = await rpc(http, srv.rpc_url, "SendMessage", {"message": user_message({"data": {"n": 1}})},
                            headers=BOB)
            assert out["result"]["task"]["status"]["state"] == "TASK_STATE_REJECTED"
        got = await rpc(http, srv.rpc_url, "GetTask", {"id": kept}, headers=ALICE)
        assert got["result"]["status"]["state"] == "TASK_STATE_COMPLETED", got


async def test_a_callers_large_messages_stay_within_its_share_of_bytes():
    settings = A2ASettings(name="t", max_frame_bytes=64 * 1024, api_keys=KEYS)
    big = {"data": {"junk": "x" * 60_000}}
    async with open_port() as port, serve(port, settings) as srv, httpx2.AsyncClient(timeout=20) as http:
        kept = await _alices_result(http, srv.rpc_url)
        for _ in range(100):
            out = await rpc(http, srv.rpc_url, "SendMessage", {"message": user_message(big)}, headers=BOB)
            assert out["result"]["task"]["status"]["state"] == "TASK_STATE_REJECTED"
        store = srv.service.store
        bobs = [r for r in store.all_records() if r.owner == "bob"]
        held = sum(len(r.task.model_dump_json(exclude_none=True)) for r in bobs)
        assert held <= settings.task_bytes_per_caller and len(bobs) < 100
        got = await rpc(http, srv.rpc_url, "GetTask", {"id": kept}, headers=ALICE)
        assert got["result"]["status"]["state"] == "TASK_STATE_COMPLETED", got


async def test_continuing_a_task_keeps_its_history_within_the_callers_share():
    """Each message on a task waiting for input is kept in its history: a caller that answers "cancel" again
    and again (the guard asks again) with large messages meets its share too."""
    settings = A2ASettings(name="t", max_frame_bytes=64 * 1024, api_keys=KEYS)
    ask = {"data": {"type": "tool_call", "tool_call_id": "c", "name": "tools__delete_file",
                    "args": {"path": "/x"}}}
    async with open_port() as port, serve(port, settings) as srv, httpx2.AsyncClient(timeout=20) as http:
        task = (await rpc(http, srv.rpc_url, "SendMessage", {"message": user_message(ask)}, headers=BOB))
        task = task["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        how = next(p["data"] for p in task["status"]["message"]["parts"]
                   if p.get("data", {}).get("type") == "input_request")
        key = how["questions"][0]["key"]
        refused = None
        for _ in range(100):
            again = user_message({"data": {"answers": {key: {"action": "cancel"}}}}, {"text": "z" * 60_000},
                                 task_id=task["id"])
            out = await rpc(http, srv.rpc_url, "SendMessage", {"message": again}, headers=BOB)
            if "error" in out:
                refused = out["error"]
                break
            assert out["result"]["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        assert refused is not None and refused["code"] == -32004 and "your share" in refused["message"]
        (record,) = srv.service.store.all_records()
        assert len(record.task.model_dump_json(exclude_none=True)) <= settings.task_bytes_per_caller
