"""stdio: each process is one conversation of the local user (owner); its facts end with it, its consents
stay the owner's. A2A: peers are the principals their tokens name; tasks, consents and conversations
(contextIds) stay theirs, and a peer can never give the user's consent."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

import httpx2
import pytest
from tests.identity.identity_rig import (
    ALICE,
    BOB,
    SESSION_META,
    User,
    env_for,
    http_client,
    http_sentinel,
    session_line,
    stdio_client,
    text,
    write_config,
)

pytestmark = pytest.mark.timeout(240)
BIND = {"context": "booking_of_interest", "value": "BK-789"}
BOUND = 'booking_of_interest = "BK-789"'
BOUND_JSON = json.dumps(BOUND)[1:-1]  # as it reads inside a task dumped to JSON


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_stdio_processes_are_conversations_of_the_owner(tmp_path, mode):
    cfg = write_config(tmp_path)
    user = User(remember=True)
    async with stdio_client(cfg, mode, user) as first:
        assert not (await first.call_tool("sentinel__sentinel_bind", BIND)).is_error
        summary = await first.call_tool("sentinel__sentinel_facts", {})
        first_id = session_line(summary)
        assert first_id.startswith("owner/stdio-") and BOUND in text(summary)
        assert not (await first.call_tool("bk__get_booking", {"booking_id": "BK-789"})).is_error
        assert len(user.asked) == 1  # the owner's consent, remembered
        # within the process, a call without the carried key is still the same conversation
        assert session_line(await first.client.call_tool("sentinel__sentinel_facts", {})) == first_id
    async with stdio_client(cfg, mode, user) as second:  # a restart of the client: a new conversation
        summary = await second.call_tool("sentinel__sentinel_facts", {})
        assert session_line(summary) != first_id and BOUND not in text(summary)
        named = await second.client.call_tool("sentinel__sentinel_facts", {}, meta={SESSION_META: first_id})
        assert named.is_error and BOUND not in text(named)
        assert not (await second.call_tool("bk__get_booking", {"booking_id": "BK-789"})).is_error
        assert len(user.asked) == 1  # consents belong to the principal, not the conversation
    # the owner's consent is not another principal's: bob over HTTP on the same state is asked
    bob_user = User()
    with http_sentinel(cfg) as (base, _):
        async with http_client(base, BOB, mode, bob_user) as bob:
            assert not (await bob.call_tool("bk__get_booking", {"booking_id": "BK-789"})).is_error
            assert len(bob_user.asked) == 1
            seen = await bob.call_tool("sentinel__sentinel_facts", {})
            assert BOUND not in text(seen)


def tool_call(name: str, args: dict, context_id: str | None = None, task_id: str | None = None) -> dict:
    message = {
        "messageId": str(uuid.uuid4()),
        "role": "ROLE_USER",
        "parts": [{"data": {"type": "tool_call", "tool_call_id": "t1", "name": name, "args": args}}],
    }
    if context_id:
        message["contextId"] = context_id
    if task_id:
        message["taskId"] = task_id
    return message


async def rpc(http: httpx2.AsyncClient, base: str, token: str, method: str, params: dict) -> dict:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    reply = await http.post(
        f"{base}/a2a", json=body, headers={"Authorization": f"Bearer {token}", "A2A-Version": "1.0"}
    )
    assert reply.status_code == 200, reply.text
    return reply.json()


async def test_a2a_peers_are_principals(tmp_path):
    cfg = write_config(tmp_path)
    read = ("bk__get_booking", {"booking_id": "BK-789"})
    with http_sentinel(cfg) as (base, _):
        async with httpx2.AsyncClient(timeout=60) as http:

            async def send(token: str, message: dict) -> dict:
                reply = await rpc(http, base, token, "SendMessage", {"message": message})
                assert "result" in reply, reply
                return reply["result"]["task"]

            # no token, a wrong one, or a body a web page could send cross-site: refused before anything runs
            assert (await http.post(f"{base}/a2a", json={})).status_code == 401
            bad = await http.post(f"{base}/a2a", json={}, headers={"Authorization": "Bearer nope-nope-nope"})
            assert bad.status_code == 401
            for ctype in (
                "text/plain",
                "application/x-www-form-urlencoded",
                "multipart/form-data; boundary=x",
                "application/json-patch+json",
                "",
                "text/plain; charset=application/json",
            ):
                r = await http.post(
                    f"{base}/a2a",
                    content=b'{"jsonrpc":"2.0","id":1,"method":"ListTasks"}',
                    headers={"Authorization": f"Bearer {ALICE}", "Content-Type": ctype},
                )
                assert r.status_code == 415, (ctype, r.status_code)

            # a personal read: the peer is asked on behalf of the user, and a peer's answer never counts
            task = await send(ALICE, tool_call(*read))
            assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task
            key = next(
                line.split(":")[0].strip("- ")
                for line in task["status"]["message"]["parts"][0]["text"].splitlines()
                if "sentinel.consent" in line
            )
            answer = {
                "messageId": str(uuid.uuid4()),
                "role": "ROLE_USER",
                "taskId": task["id"],
                "contextId": task["contextId"],
                "parts": [
                    {
                        "data": {
                            "answers": {
                                key: {
                                    "action": "accept",
                                    "provenance": "user",
                                    "content": {"allow": True, "remember": True},
                                }
                            }
                        }
                    }
                ],
            }
            done = await send(ALICE, answer)
            assert done["status"][
                "state"
            ] == "TASK_STATE_REJECTED" and "must be answered by the user" in json.dumps(done), done

            # the owner grants alice's consent with the CLI: alice's reads run, bob's do not
            grant = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "sentinel_mcp",
                    "-c",
                    str(cfg),
                    "consent",
                    "grant",
                    "alice",
                    "bookings",
                ],
                capture_output=True,
                text=True,
                timeout=60,
                env=env_for(cfg),
            )
            assert grant.returncode == 0, grant.stderr
            mine = await send(ALICE, tool_call(*read))
            assert mine["status"]["state"] == "TASK_STATE_COMPLETED", mine
            theirs = await send(BOB, tool_call(*read))
            assert theirs["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"

            # tasks are their principal's: bob cannot see, list, continue or cancel alice's
            for method, params in (
                ("GetTask", {"id": mine["id"]}),
                ("CancelTask", {"id": task["id"]}),
                ("SendMessage", {"message": tool_call(*read, task_id=mine["id"])}),
            ):
                reply = await rpc(http, base, BOB, method, params)
                assert "error" in reply and "result" not in reply, (method, reply)
            listed = (await rpc(http, base, BOB, "ListTasks", {}))["result"]["tasks"]
            assert {t["id"] for t in listed} == {theirs["id"]}
            assert {t["id"] for t in (await rpc(http, base, ALICE, "ListTasks", {}))["result"]["tasks"]} >= {
                task["id"],
                mine["id"],
            }

            # a contextId is one conversation of its principal: facts do not cross contexts or principals
            bound = await send(ALICE, tool_call("sentinel__sentinel_bind", BIND, context_id="trip-1"))
            assert bound["status"]["state"] == "TASK_STATE_COMPLETED", bound
            same = await send(ALICE, tool_call("sentinel__sentinel_facts", {}, context_id="trip-1"))
            other = await send(ALICE, tool_call("sentinel__sentinel_facts", {}, context_id="trip-2"))
            bobs = await send(BOB, tool_call("sentinel__sentinel_facts", {}, context_id="trip-1"))
            assert BOUND_JSON in json.dumps(same)
            assert BOUND_JSON not in json.dumps(other) and BOUND_JSON not in json.dumps(bobs)
    with http_sentinel(cfg) as (base, _):  # a restart: the same contextId is a new conversation
        async with httpx2.AsyncClient(timeout=60) as http:
            reply = await rpc(
                http,
                base,
                ALICE,
                "SendMessage",
                {"message": tool_call("sentinel__sentinel_facts", {}, context_id="trip-1")},
            )
            assert BOUND_JSON not in json.dumps(reply) and "TASK_STATE_COMPLETED" in json.dumps(reply)
