"""A2A peers answering Sentinel's questions, through the real gateway (its HTTP app with A2A mounted), the
real
policy engine, the airline example and the toolbox upstream: a peer cannot approve what only the user may,
an approval is JSON true and nothing else, a decline is not remembered, and questions are shown safely.
Side effects that must not happen: the toolbox's marker file, and the cancellation of a reservation."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, AsyncIterator

import httpx2
import pytest
from tests.a2a.served_gateway import gateway_with_a2a
from tests.a2a.a2a_rig import user_message

from sentinel_mcp.gateway.audit import read_audit
from sentinel_mcp.paths import PROJECT_ROOT, RULEBASES_DIR
from tests.support.forked_upstreams import forked_spec

pytestmark = pytest.mark.timeout(120)
TOOLBOX = str(PROJECT_ROOT / "tests" / "gateway" / "toolbox_server.py")
PEER = "peer-token-0123456789"  # the peer is a principal Sentinel knows by its token


@contextlib.asynccontextmanager
async def a2a_gateway(tmp_path: Path, answers_provenance: str = "agent") -> AsyncIterator[tuple[Any, Any]]:
    raw = {
        "mcpServers": {
            "tb": forked_spec(TOOLBOX),
            "airline": {
                **forked_spec("-m", "examples.airline"),
                "cwd": str(PROJECT_ROOT),
            },
        },
        "sentinel": {
            "data_dir": str(tmp_path),
            "builtins": [],
            "rulebases": [str(RULEBASES_DIR / "default.pl"), str(RULEBASES_DIR / "airline.pl")],
            "seeds": {"current_user": "mia_li_3668"},
            "principals": [{"name": "peer", "token": PEER}],
            "a2a": {"name": "answers-test", "answers_provenance": answers_provenance},
        },
    }
    async with gateway_with_a2a(raw, tmp_path) as gw:
        base, config = gw.base, gw.config
        headers = {"A2A-Version": "1.0", "Authorization": f"Bearer {PEER}"}
        async with httpx2.AsyncClient(timeout=60, headers=headers) as http:

            async def send(
                *parts: dict[str, Any], task_id: str | None = None, context_id: str | None = None
            ) -> dict[str, Any]:
                body = {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "SendMessage",
                    "params": {"message": user_message(*parts, task_id=task_id, context_id=context_id)},
                }
                return (await http.post(base + "/a2a", json=body)).json()

            yield send, config


def call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"data": {"type": "tool_call", "tool_call_id": "tc-1", "name": name, "args": args}}


def questions(task: dict[str, Any]) -> list[dict[str, Any]]:
    parts = task["status"]["message"]["parts"]
    return next(p["data"] for p in parts if p.get("data", {}).get("type") == "input_request")["questions"]


def status_text(task: dict[str, Any]) -> str:
    return " ".join(p.get("text", "") for p in task["status"]["message"]["parts"])


async def refused_rows(config: Any) -> int:
    # through the running gateway's store (it holds the file exclusively while it runs)
    return sum(r["outcome"] == "answer_refused" for r in await read_audit(config.store_path, tail=1000))


async def test_a_peer_cannot_approve_what_only_the_user_may(tmp_path: Path) -> None:
    marker = tmp_path / "marker.txt"
    async with a2a_gateway(tmp_path) as (send, config):
        approvals = [{"approve": True}, {"approve": "true"}, {"approve": 1}, {"approve": True, "x": 1}]
        for content in approvals:
            task = (await send(call("tb__write_marker", {"path": str(marker), "text": "peer"})))["result"][
                "task"
            ]
            assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task
            key = questions(task)[0]["key"]
            answer = {
                "data": {"answers": {key: {"action": "accept", "content": content, "provenance": "user"}}}
            }
            done = (await send(answer, task_id=task["id"]))["result"]["task"]
            assert done["status"]["state"] == "TASK_STATE_REJECTED", done
            assert "must be answered by the user" in status_text(done), status_text(done)
        assert not marker.exists()

        # the airline: the peer may give neither the reason for the cancellation (it decides whether the
        # reservation may be cancelled: airline.pl's cancel_reason is the user's alone) nor the confirmation;
        # the reservation stays active
        ctx = "airline-conversation"
        task = (
            await send(call("airline__cancel_reservation", {"reservation_id": "NO6JO3"}), context_id=ctx)
        )["result"]["task"]
        for _ in range(3):
            if task["status"]["state"] != "TASK_STATE_INPUT_REQUIRED":
                break
            answers = {}
            for q in questions(task):
                prop = q["requested_schema"]["properties"]["answer"]
                answers[q["key"]] = {
                    "action": "accept",
                    "content": {"answer": True if prop["type"] == "boolean" else "change_of_plan"},
                }
            task = (await send({"data": {"answers": answers}}, task_id=task["id"], context_id=ctx))["result"][
                "task"
            ]
        assert task["status"]["state"] == "TASK_STATE_REJECTED", task
        text = status_text(task)
        assert (
            "Why do you want to cancel reservation NO6JO3?" in text and "must be answered by the user" in text
        ), text
        details = await send(call("airline__get_reservation_details", {"reservation_id": "NO6JO3"}))
        details = details["result"]["task"]
        assert details["status"]["state"] == "TASK_STATE_COMPLETED", details
        content = details["artifacts"][0]["parts"][0]["data"]["artifacts"][0]["content"]
        assert content["reservation_id"] == "NO6JO3" and content.get("status") != "cancelled", content
        assert await refused_rows(config) == len(approvals) + 1


BAD = [
    {"approve": "true"},
    {"approve": "false"},
    {"approve": "yes"},
    {"approve": 1},
    {"approve": 0},
    {"approve": "1"},
    {"approve": None},
    {"approve": []},
    {"approve": {}},
    {"approve": {"approve": "true"}},
    {},
    {"approve": True, "extra": 1},
    {"APPROVE": True},
]


async def test_a_trusted_peers_approval_is_json_true_and_nothing_else(tmp_path: Path) -> None:
    """With ``answers_provenance: user`` (the operator trusts peers to relay their user), types are still
    strict."""
    marker = tmp_path / "marker.txt"
    args = {"path": str(marker), "text": "trusted"}
    async with a2a_gateway(tmp_path, answers_provenance="user") as (send, config):

        async def ask() -> tuple[str, str]:
            task = (await send(call("tb__write_marker", args)))["result"]["task"]
            assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task
            return task["id"], questions(task)[0]["key"]

        for content in BAD:
            task_id, key = await ask()
            done = (
                await send(
                    {"data": {"answers": {key: {"action": "accept", "content": content}}}}, task_id=task_id
                )
            )["result"]["task"]
            assert done["status"]["state"] == "TASK_STATE_REJECTED", (content, done)
            assert "not accepted" in status_text(done) and "not answered" in status_text(done), status_text(
                done
            )
        for shape in ("yes", ["approve"], True):  # not even an object: the message itself is refused
            task_id, key = await ask()
            reply = await send(
                {"data": {"answers": {key: {"action": "accept", "content": shape}}}}, task_id=task_id
            )
            assert reply["error"]["code"] == -32602, reply
        assert not marker.exists()
        assert await refused_rows(config) == len(BAD)
        # a decline ends that task only; the next task asks again and a JSON true approves
        task_id, key = await ask()
        done = (await send({"data": {"answers": {key: {"action": "decline"}}}}, task_id=task_id))["result"][
            "task"
        ]
        assert done["status"]["state"] == "TASK_STATE_REJECTED" and "you declined" in status_text(done)
        task_id, key = await ask()
        done = (
            await send(
                {"data": {"answers": {key: {"action": "accept", "content": {"approve": True}}}}},
                task_id=task_id,
            )
        )["result"]["task"]
        assert done["status"]["state"] == "TASK_STATE_COMPLETED", done
    assert marker.read_text() == "trusted\n"


async def test_a2a_questions_are_shown_safely(tmp_path: Path) -> None:
    value = "bills\u202ecod.exe\u200b\x1b[31m"
    async with a2a_gateway(tmp_path) as (send, _config):
        task = await send(call("tb__write_marker", {"path": str(tmp_path / "m.txt"), "text": value}))
        task = task["result"]["task"]
        parts = task["status"]["message"]["parts"]
        har = next(p["data"] for p in parts if p.get("data", {}).get("type") == "human_assist_request")
        texts = [
            har["reason"],
            *har["suggested_questions"],
            status_text(task),
            *(q["message"] for q in questions(task)),
        ]
        for t in texts:
            assert not any(ch in t for ch in "\u202e\u200b\x1b"), t
        assert "bills⟨U+202E⟩cod.exe⟨U+200B⟩" in har["suggested_questions"][0]
        assert "Shown safely" in har["suggested_questions"][0]


async def test_each_task_names_the_gateways_decision(tmp_path: Path) -> None:
    """Completed, asked and refused tasks carry ``sentinel/decision_id`` (artifact and status metadata): the
    key of that decision's audit row."""
    async with a2a_gateway(tmp_path) as (send, config):
        done = (await send(call("airline__get_reservation_details", {"reservation_id": "NO6JO3"})))["result"][
            "task"
        ]
        assert done["status"]["state"] == "TASK_STATE_COMPLETED", done
        done_id = done["artifacts"][0]["metadata"]["sentinel/decision_id"]
        assert done["status"]["message"]["metadata"]["sentinel/decision_id"] == done_id
        asked = (await send(call("tb__write_marker", {"path": str(tmp_path / "m"), "text": "x"})))["result"][
            "task"
        ]
        assert asked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", asked
        asked_id = asked["status"]["message"]["metadata"]["sentinel/decision_id"]
        unknown = (await send(call("tb__nope", {})))["result"]["task"]
        unknown_id = unknown["status"]["message"]["metadata"]["sentinel/decision_id"]
        rows = {r["decision_id"]: r for r in await read_audit(config.store_path, tail=200)}
        assert (rows[done_id]["tool"], rows[done_id]["outcome"]) == ("airline__get_reservation_details", "ok")
        assert (rows[asked_id]["tool"], rows[asked_id]["decision"]) == ("tb__write_marker", "ask")
        assert rows[unknown_id]["outcome"] == "unknown_tool"
        assert len({done_id, asked_id, unknown_id}) == 3
