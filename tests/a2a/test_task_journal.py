"""Tasks survive a restart when a task database is configured (real SQLite, real servers, twice)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import httpx2
import pytest
from tests.a2a.a2a_rig import RELEASE, open_port, rpc, serve, user_message

from sentinel_mcp.a2a.settings import A2ASettings

pytestmark = pytest.mark.timeout(60)


def tool_part(name: str, args: dict) -> dict:
    return {"data": {"type": "tool_call", "tool_call_id": "j", "name": name, "args": args}}


async def test_tasks_survive_a_restart_and_input_required_resumes(tmp_path: Path):
    db = tmp_path / "a2a" / "tasks.db"
    settings = A2ASettings()
    RELEASE.pop("journal", None)
    async with httpx2.AsyncClient(timeout=30, headers={"A2A-Version": "1.0"}) as http:
        async with open_port() as port, serve(port, settings, task_db=db) as srv:
            done = (await rpc(http, srv.rpc_url, "SendMessage", {"message": user_message(
                tool_part("tools__echo", {"text": "kept"}))}))["result"]["task"]
            asked = (await rpc(http, srv.rpc_url, "SendMessage", {"message": user_message(
                tool_part("tools__delete_file", {"path": "/tmp/j"}))}))["result"]["task"]
            running = await rpc(
                http,
                srv.rpc_url,
                "SendMessage",
                {
                    "message": user_message(tool_part("tools__wait_for", {"key": "journal"})),
                    "configuration": {"returnImmediately": True},
                },
            )
            running = running["result"]["task"]
            assert asked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
            assert running["status"]["state"] == "TASK_STATE_WORKING"
        # the process "restarts": new port, new service, same database
        async with open_port() as port, serve(port, settings, task_db=db) as srv:
            got = (await rpc(http, srv.rpc_url, "GetTask", {"id": done["id"]}))["result"]
            assert got["status"]["state"] == "TASK_STATE_COMPLETED" and got["artifacts"] == done["artifacts"]
            interrupted = (await rpc(http, srv.rpc_url, "GetTask", {"id": running["id"]}))["result"]
            assert interrupted["status"]["state"] == "TASK_STATE_FAILED"
            assert "restarted" in interrupted["status"]["message"]["parts"][0]["text"]
            key = asked["status"]["message"]["parts"][2]["data"]["questions"][0]["key"]
            answer = {"data": {"answers": {key: {"action": "accept", "content": {"confirm": True}}}}}
            resumed = (
                await rpc(
                    http, srv.rpc_url, "SendMessage", {"message": user_message(answer, task_id=asked["id"])}
                )
            )["result"]["task"]
            assert resumed["status"]["state"] == "TASK_STATE_COMPLETED"
            assert port.calls[-1].name == "tools__delete_file" and port.calls[-1].arguments == {
                "path": "/tmp/j"
            }
            listed = (await rpc(http, srv.rpc_url, "ListTasks", {}))["result"]
            assert listed["totalSize"] == 3
            # still private to the caller that made them
            assert srv.service.store.get(done["id"], "peer:127.0.0.1").owner == "peer:127.0.0.1"
    with sqlite3.connect(db) as conn:
        states = dict(conn.execute("SELECT id, state FROM a2a_task").fetchall())
    conn.close()
    assert states == {
        done["id"]: "TASK_STATE_COMPLETED",
        asked["id"]: "TASK_STATE_COMPLETED",
        running["id"]: "TASK_STATE_FAILED",
    }


async def test_evicted_tasks_leave_the_database_and_bad_rows_are_skipped(tmp_path: Path):
    db = tmp_path / "tasks.db"
    async with httpx2.AsyncClient(timeout=30, headers={"A2A-Version": "1.0"}) as http:
        async with open_port() as port, serve(port, A2ASettings(max_tasks=2), task_db=db) as srv:
            ids = []
            for i in range(3):
                t = (
                    await rpc(
                        http,
                        srv.rpc_url,
                        "SendMessage",
                        {"message": user_message(tool_part("tools__echo", {"text": str(i)}))},
                    )
                )["result"]["task"]
                ids.append(t["id"])
        with sqlite3.connect(db) as conn:
            assert {r[0] for r in conn.execute("SELECT id FROM a2a_task")} == set(ids[1:])
            conn.execute(
                "INSERT INTO a2a_task (id, owner, session_id, state, updated, task, pending) "
                "VALUES ('bad', 'x', 's', 'TASK_STATE_COMPLETED', 'z', '{not json', NULL)"
            )
        conn.close()  # the journal opens its file exclusively (sentinel_mcp/storage/sqlite.py)
        async with open_port() as port, serve(port, A2ASettings(max_tasks=2), task_db=db) as srv:
            assert (await rpc(http, srv.rpc_url, "GetTask", {"id": ids[0]}))["error"]["code"] == -32001
            assert (await rpc(http, srv.rpc_url, "GetTask", {"id": ids[2]}))["result"]["id"] == ids[2]
