"""Replays the ground-truth actions of train-split tau2 tasks against the airline server (stdio subprocess).

Every ground-truth action must succeed, and each write must be visible to the read tools afterwards.
"""

from __future__ import annotations

import json
import sys

import pytest
from mcp import Client, StdioServerParameters

from sentinel_mcp.paths import PROJECT_ROOT

DATA_DIR = PROJECT_ROOT / "examples" / "airline" / "data"
TASKS = {task["id"]: task for task in json.loads((DATA_DIR / "tasks.json").read_text())}
TRAIN = json.loads((DATA_DIR / "split_tasks.json").read_text())["train"]
# Train tasks that between them use every write tool (book, cancel, update flights/baggages/passengers).
REPLAYED = ["7", "12", "14", "17", "23", "40"]


def test_the_replayed_tasks_are_train_tasks_covering_every_write_tool() -> None:
    assert set(REPLAYED) <= set(TRAIN)
    used = {
        action["name"] for task_id in REPLAYED for action in TASKS[task_id]["evaluation_criteria"]["actions"]
    }
    assert {
        "book_reservation",
        "cancel_reservation",
        "update_reservation_flights",
        "update_reservation_baggages",
        "update_reservation_passengers",
    } <= used


@pytest.mark.timeout(60)
@pytest.mark.parametrize("task_id", REPLAYED)
async def test_ground_truth_actions_succeed(task_id: str) -> None:
    actions = TASKS[task_id]["evaluation_criteria"]["actions"]
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "examples.airline"], cwd=str(PROJECT_ROOT)
    )
    async with Client(params, mode="auto") as client:
        writes = {
            tool.name for tool in (await client.list_tools()).tools if tool.annotations.destructive_hint
        }
        for action in actions:
            result = await client.call_tool(action["name"], action["arguments"])
            assert not result.is_error, f"{action['action_id']} {action['name']}: {result.content[0].text}"
            if action["name"] not in writes or "reservation_id" not in result.structured_content:
                continue
            reservation = result.structured_content
            seen = await client.call_tool(
                "get_reservation_details", {"reservation_id": reservation["reservation_id"]}
            )
            assert seen.structured_content == reservation
            if action["name"] == "book_reservation":
                owner = await client.call_tool("get_user_details", {"user_id": reservation["user_id"]})
                assert reservation["reservation_id"] in owner.structured_content["reservations"]
            if action["name"] == "cancel_reservation":
                assert reservation["status"] == "cancelled"
