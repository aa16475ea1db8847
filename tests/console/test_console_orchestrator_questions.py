"""An orchestrator's sub-task that needs an answer reaches the person who can give it: the owner, in the
console inbox (bound to the round shown, as every A2A item is), never the orchestrator itself.

The orchestrator calls Sentinel as ``orchestrator_principal``, a configured principal (its token in
``sentinel.principals``), not an A2A key: its tasks are owned by that principal. The console showed an A2A
task waiting for input only to its owner's own console, and the owner's console listed the A2A key agents'
tasks only, so the orchestrator's question was shown to nobody but the orchestrator (an agent, which could
then answer it "as the user" by signing in), and otherwise waited until it expired. Real Sentinel over HTTP
(its A2A endpoint and console), real guard, real upstream."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
import pytest
from tests.a2a.a2a_rig import user_message
from tests.console.console_rig import BOB, OWNER_TOKEN, console_config, http_sentinel, items_of, signed_in

pytestmark = pytest.mark.timeout(240)


async def _rpc(http: httpx2.AsyncClient, base: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return (await http.post(base + "/a2a", json=body)).json()["result"]


async def test_an_orchestrators_sub_task_question_is_the_owners_to_answer(tmp_path) -> None:
    cfg = console_config(tmp_path)
    body = json.loads(cfg.read_text())
    body["sentinel"]["a2a"]["orchestrator_principal"] = "bob"  # bob is the orchestrator here
    cfg.write_text(json.dumps(body))
    with http_sentinel(cfg) as (base, _proc):
        headers = {"A2A-Version": "1.0", "Authorization": f"Bearer {BOB}"}
        async with httpx2.AsyncClient(timeout=60, headers=headers) as orch:
            call = {"type": "tool_call", "tool_call_id": "tc-1", "name": "tb__delete_thing",
                    "args": {"name": "old-report"}}
            task = (await _rpc(orch, base, "SendMessage", {"message": user_message({"data": call})}))["task"]
            assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task["status"]
            item = f"a2a-{task['id']}"
            async with signed_in(base, BOB) as itself:  # the orchestrator signed in: not its to answer
                page = await itself.page("/console/inbox")
                assert item not in items_of(page), page[-1500:]
                r = await itself.post(f"/console/inbox/{item}", {"decision": "approve", "asked": "0" * 64})
                assert r.status_code == 404, r.text[-800:]
            async with signed_in(base, OWNER_TOKEN) as owner:
                page = await owner.page("/console/inbox")
                assert item in items_of(page), page[-2000:]
                r = await owner.post(f"/console/inbox/{item}", {"decision": "approve"})
                assert r.status_code == 303, r.text[-800:]
            for _ in range(100):
                task = await _rpc(orch, base, "GetTask", {"id": task["id"]})
                task = task.get("task", task)
                if task["status"]["state"] not in ("TASK_STATE_INPUT_REQUIRED", "TASK_STATE_WORKING",
                                                   "TASK_STATE_SUBMITTED"):
                    break
                await asyncio.sleep(0.1)
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task["status"]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_orchestrators_own_mcp_client_is_never_asked_for_the_user(tmp_path, mode) -> None:
    """The principal an orchestrator acts as (``orchestrator_principal``, here the configured principal bob)
    signed in to the MCP front, its client able to elicit and saying yes to everything: it is asked nothing
    (its yes would be the user's), in either era. Its call is blocked and its question waits in the owner's
    inbox, not bob's; after the owner's yes bob's retry runs, still asking bob nothing. Before, a configured
    principal was a person over MCP whoever it acted as: bob's client was asked, and its yes deleted."""
    from tests.identity.identity_rig import User, http_client, text

    cfg = console_config(tmp_path)
    body = json.loads(cfg.read_text())
    body["sentinel"]["a2a"]["orchestrator_principal"] = "bob"
    cfg.write_text(json.dumps(body))
    with http_sentinel(cfg) as (base, _proc):
        says_yes = User(approve=True)
        async with http_client(base, BOB, mode, user=says_yes) as orch, \
                signed_in(base, BOB) as itself, signed_in(base, OWNER_TOKEN) as owner:
            blocked = await orch.call_tool("tb__delete_thing", {"name": "orch-thing"})
            assert says_yes.asked == [], says_yes.asked
            assert blocked.is_error and "deleted" not in text(blocked), text(blocked)
            page = await owner.wait_items(1)
            [item] = items_of(page)
            assert "orch-thing" in page
            assert item not in items_of(await itself.page("/console/inbox"))
            r = await itself.post(f"/console/inbox/{item}", {"decision": "approve", "asked": "0" * 64})
            assert r.status_code in (403, 404), r.text[-800:]
            assert (await owner.post(f"/console/inbox/{item}", {"decision": "approve"})).status_code == 303
            done = await orch.call_tool("tb__delete_thing", {"name": "orch-thing"})
            assert not done.is_error and text(done) == "deleted orch-thing", text(done)
            assert says_yes.asked == []
