"""One caller cannot fill the shared task store: each holds at most its share of unfinished tasks (refused
for that caller only), and a task waiting for input ends FAILED once nobody answered in time."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest

from tests.a2a.a2a_rig import open_port

from sentinel_mcp.a2a.jsonrpc import RpcError
from sentinel_mcp.a2a.protocol import Message, Part, SendMessageConfiguration, SendMessageRequest
from sentinel_mcp.a2a.service import A2AService
from sentinel_mcp.a2a.settings import A2ASettings


def _call(tool: str, **args: Any) -> SendMessageRequest:
    data = {"type": "tool_call", "tool_call_id": str(uuid.uuid4()), "name": tool, "args": args}
    return SendMessageRequest(
        message=Message(message_id=str(uuid.uuid4()), role="ROLE_USER", parts=[Part.of_data(data)])
    )


def _waiting(n: int) -> list[SendMessageRequest]:
    """``n`` calls the guard asks about: each leaves a task INPUT_REQUIRED."""
    return [_call("tools__delete_file", path=f"/tmp/x{i}") for i in range(n)]


def _immediate(req: SendMessageRequest) -> SendMessageRequest:
    req.configuration = SendMessageConfiguration(return_immediately=True)
    return req


@pytest.mark.parametrize(
    "settings, share",
    [
        (A2ASettings(max_tasks=20), 2),  # default: a tenth of max_tasks
        (A2ASettings(max_tasks=20, max_open_per_caller=5), 5),
        (A2ASettings(max_tasks=3), 1),  # at least one
    ],
)
async def test_one_caller_cannot_lock_the_others_out(settings: A2ASettings, share: int) -> None:
    async with open_port() as port:
        service = A2AService(port, settings)
        try:
            for req in _waiting(share):
                out = await service.send_message(req, "rover")
                assert out["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
            # more asks, a call that would complete, one sent to return at once: all refused, for rover only
            more = [*_waiting(3), _call("tools__echo", text="hi"), _immediate(_call("tools__echo", text="x"))]
            for req in more:
                with pytest.raises(RpcError) as refused:
                    await service.send_message(req, "rover")
                assert refused.value.code == -32004 and "your share" in refused.value.message
            for other in ("alice", "owner", "mallory"):
                out = await service.send_message(_call("tools__echo", text=other), other)
                assert out["task"]["status"]["state"] == "TASK_STATE_COMPLETED", out
            # finished tasks do not count: alice keeps working past the share
            for i in range(share + 2):
                out = await service.send_message(_call("tools__echo", text=str(i)), "alice")
                assert out["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        finally:
            await service.close()


async def test_a_task_waiting_for_input_ends_failed_when_nobody_answers_in_time() -> None:
    async with open_port() as port:
        service = A2AService(port, A2ASettings(max_tasks=10, input_wait_seconds=0.05))
        try:
            ids = []
            for req in _waiting(1):
                ids.append((await service.send_message(req, "rover"))["task"]["id"])
            with pytest.raises(RpcError):  # rover's share (1) is held by the waiting task
                await service.send_message(_waiting(1)[0], "rover")
            await asyncio.sleep(0.2)  # past the wait (a lower bound only: nothing here measures time)
            out = await service.send_message(_call("tools__echo", text="again"), "rover")
            assert out["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            for record in (r for r in service.store.all_records() if r.task.id in ids):
                assert record.task.status.state == "TASK_STATE_FAILED" and record.pending is None
                assert "no answer in time" in str(record.task.status.message)
            assert (await service.waiting_for("rover")) == []  # gone from the owner's inbox too
        finally:
            await service.close()


async def test_a_waiting_task_expires_with_no_new_task_arriving() -> None:
    async with open_port() as port:
        service = A2AService(port, A2ASettings(input_wait_seconds=0.05))
        try:
            task_id = (await service.send_message(_waiting(1)[0], "rover"))["task"]["id"]
            assert [r.task.id for r in (await service.waiting_for("rover"))] == [task_id]
            for _ in range(400):  # waits for the sweep (bounded); nothing here measures time
                if not (await service.waiting_for("rover")):
                    break
                await asyncio.sleep(0.05)
            record = next(r for r in service.store.all_records() if r.task.id == task_id)
            assert record.task.status.state == "TASK_STATE_FAILED"
        finally:
            await service.close()
        assert service._expiry is None  # closed with the service


def test_the_share_is_validated() -> None:
    from sentinel_mcp.config import ConfigError

    for bad in ({"max_open_per_caller": 0}, {"max_open_per_caller": "many"}, {"input_wait_seconds": 0},
                {"input_wait_seconds": -1}, {"input_wait_seconds": 10**9}):
        with pytest.raises(ConfigError):
            A2ASettings.from_section(bad)
    assert A2ASettings(max_tasks=5, max_open_per_caller=50).open_per_caller == 5
