"""Another principal's task id in any spelling is no task of yours: the id as it was issued, its upper case,
braces, a urn:uuid: prefix, spaces, a newline, a zero-width space, percent-encoding, a trailing slash, a
prefix of it, a glob, a SQL pattern. Every method refuses each alike ("no such task"), before and after the
gateway restarts on its task journal (the owner of a task read back is the owner it had), nothing runs for the
stranger, and the owner's task stays as it was. ListTasks' pageToken is a cursor over the caller's own
tasks: one forged from the other's task (its timestamp and id) or malformed lists nothing of the other's."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from tests.a2a.a2a_rig import open_port, rpc, serve, user_message

from sentinel_mcp.a2a.settings import A2ASettings

pytestmark = pytest.mark.timeout(120)

ALICE = {"X-API-Key": "alice-key-123"}
BOB = {"X-API-Key": "bob-key-4567"}


def spellings(tid: str) -> list[str]:
    return [
        tid.upper(), "{" + tid + "}", "urn:uuid:" + tid, " " + tid, tid + " ", tid + "\n", tid + "\u200b",
        tid.replace("-", "%2D"), tid + "/", tid[:-1], tid[:8], tid[:-1] + "*", tid[:-1] + "%", tid[:-1] + "_",
        tid.replace("-", ""), "\ufeff" + tid, tid.replace("a", "\u0430"),
    ]


def _call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return user_message({"data": {"type": "tool_call", "tool_call_id": "x", "name": name, "args": args}})


async def _refused_everywhere(http: Any, url: str, tid: str, key: str) -> None:
    yes = {"answers": {key: {"action": "accept", "content": {"confirm": True}}}}
    tries = {
        "GetTask": {"id": tid, "historyLength": 50},
        "CancelTask": {"id": tid},
        "SubscribeToTask": {"id": tid},
        "SendMessage": {"message": user_message({"data": yes}, task_id=tid)},
    }
    for method, params in tries.items():
        reply = await rpc(http, url, method, params, headers=BOB)
        # no such task, or an id that is no id at all (-32602): never the task, never "not cancelable"
        assert reply.get("error", {}).get("code") in (-32001, -32602), (method, repr(tid), reply)
        assert "result" not in reply


async def test_no_spelling_of_anothers_task_id_reaches_it(http, tmp_path: Path) -> None:
    settings = A2ASettings(api_keys={"alice": "alice-key-123", "bob": "bob-key-4567"})
    db = tmp_path / "tasks.db"
    async with open_port() as port:
        async with serve(port, settings, task_db=db) as srv:
            asked = await rpc(http, srv.rpc_url, "SendMessage",
                              {"message": _call("tools__delete_file", {"path": "/tmp/a"})}, headers=ALICE)
            task = asked["result"]["task"]
            assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task
            key = task["status"]["message"]["parts"][2]["data"]["questions"][0]["key"]
            calls = len(port.calls)
            for tid in [task["id"], *spellings(task["id"])]:
                await _refused_everywhere(http, srv.rpc_url, tid, key)
            # a cursor forged from alice's task (its timestamp and id), and malformed ones
            forged = [
                base64.urlsafe_b64encode(json.dumps(["c1", task["status"]["timestamp"], task["id"]]).encode())
                .decode(),
                base64.urlsafe_b64encode(json.dumps(["c1", "9999", "~"]).encode()).decode(),
                base64.urlsafe_b64encode(json.dumps({"c1": 1, "a": 2, "b": 3}).encode()).decode(),
                "x" * 600,
                "%%%%",
            ]
            for token in forged:
                listed = await rpc(http, srv.rpc_url, "ListTasks", {"pageToken": token}, headers=BOB)
                if "error" in listed:
                    assert listed["error"]["code"] == -32602, listed
                else:
                    assert listed["result"]["tasks"] == [] and listed["result"]["totalSize"] == 0, listed
            assert len(port.calls) == calls  # nothing ran for bob
        # the gateway restarts on the same journal: the task is read back as alice's
        async with serve(port, settings, task_db=db) as srv:
            for tid in [task["id"], *spellings(task["id"])[:4]]:
                await _refused_everywhere(http, srv.rpc_url, tid, key)
            mine = await rpc(http, srv.rpc_url, "GetTask", {"id": task["id"]}, headers=ALICE)
            assert mine["result"]["id"] == task["id"], mine
            bobs = await rpc(http, srv.rpc_url, "ListTasks", {}, headers=BOB)
            assert bobs["result"]["tasks"] == [], bobs
