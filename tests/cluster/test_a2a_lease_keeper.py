"""The replica's lease keeper runs beside its tasks: it reads which of them run, then renews their leases in
the shared store. A task that settles in between (it asks, and its answer starts the next round at once) is
still this replica's: it must never be taken for lost, its new round stopped and reported CANCELED where the
answered call was due to complete. Found by CI (one run in about thirty); here the keeper renews without pause
so the window is open on every round."""

from __future__ import annotations

import uuid

import pytest

from sentinel_mcp.a2a.protocol import SendMessageRequest
from sentinel_mcp.a2a.service import A2AService
from sentinel_mcp.a2a.settings import A2ASettings
from tests.a2a.a2a_rig import open_port, user_message

pytestmark = pytest.mark.timeout(120)
ROUNDS = 40


def ask(path: str) -> dict:
    return {
        "data": {
            "type": "tool_call",
            "tool_call_id": "k",
            "name": "tools__delete_file",
            "args": {"path": path},
        }
    }


async def test_an_answered_task_completes_while_its_leases_are_renewed(pg_url: str) -> None:
    async with open_port(with_sensors=False) as port:
        service = A2AService(port, A2ASettings())  # type: ignore[arg-type]
        await service.open(
            pg_url, replica=f"keeper-{uuid.uuid4().hex[:6]}", lease_seconds=600, renew_every=0.0005
        )
        try:
            states = []
            for n in range(ROUNDS):
                first = await service.send_message(
                    SendMessageRequest.model_validate({"message": user_message(ask(f"/tmp/k{n}"))}), "alice"
                )
                task = first["task"]
                assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task
                key = next(
                    p["data"]["questions"][0]["key"]
                    for p in task["status"]["message"]["parts"]
                    if p.get("data", {}).get("type") == "input_request"
                )
                answer = {"data": {"answers": {key: {"action": "accept", "content": {"confirm": True}}}}}
                done = await service.send_message(
                    SendMessageRequest.model_validate({"message": user_message(answer, task_id=task["id"])}),
                    "alice",
                )
                states.append(done["task"]["status"]["state"])
            assert states == ["TASK_STATE_COMPLETED"] * ROUNDS
        finally:
            await service.close()
