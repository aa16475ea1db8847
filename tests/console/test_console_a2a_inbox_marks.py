"""An A2A task waiting for the user's answer is shown in the console inbox marked once, as every inbox item
is (``inbox_pages._a2a_items``; answered by ``_decide_a2a``): the call's argument and the guard's question,
each hostile character a single ``⟨U+XXXX⟩`` (a value's typed-out mark ``⟨U+27E8⟩U+200B⟨U+27E9⟩``), never
raw and never the mark of a mark; the person's approval answers the task, and the tool gets the argument as
it was sent. Real Sentinel over HTTP (its A2A endpoint and console), real guard, real upstream."""

from __future__ import annotations

import asyncio
import html
import re
from typing import Any

import httpx2
import pytest
from tests.a2a.a2a_rig import user_message
from tests.console.console_rig import ALICE, console_config, http_sentinel, items_of, signed_in

pytestmark = pytest.mark.timeout(240)
VALUE = "bills\u202ecod.exe⟨U+200B⟩"
ONCE = "bills⟨U+202E⟩cod.exe⟨U+27E8⟩U+200B⟨U+27E9⟩"


async def _rpc(http: httpx2.AsyncClient, base: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return (await http.post(base + "/a2a", json=body)).json()["result"]


async def test_an_a2a_task_in_the_inbox_is_shown_marked_once_and_answered(tmp_path) -> None:
    with http_sentinel(console_config(tmp_path)) as (base, _proc):
        headers = {"A2A-Version": "1.0", "Authorization": f"Bearer {ALICE}"}
        async with httpx2.AsyncClient(timeout=60, headers=headers) as peer:
            call = {"type": "tool_call", "tool_call_id": "tc-1", "name": "tb__delete_thing",
                    "args": {"name": VALUE}}
            task = (await _rpc(peer, base, "SendMessage", {"message": user_message({"data": call})}))["task"]
            assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task["status"]
            async with signed_in(base, ALICE) as person:
                page = await person.page("/console/inbox")
                [item] = [i for i in items_of(page) if i.startswith("a2a-")]
                shown = re.sub(r"<[^>]+>", "", html.unescape(page))
                assert "\u202e" not in page and "A2A task (input required)" in shown, shown[-1500:]
                assert f'tb__delete_thing(name="{ONCE}")' in shown, shown[-1500:]  # the question
                assert shown.count(ONCE) >= 2 and "U+27E8⟩U+202E" not in shown, shown[-1500:]
                r = await person.post(f"/console/inbox/{item}", {"decision": "approve"})
                assert r.status_code == 303, r.text[:500]
            for _ in range(100):
                task = (await _rpc(peer, base, "GetTask", {"id": task["id"]}))
                task = task.get("task", task)
                if task["status"]["state"] not in ("TASK_STATE_INPUT_REQUIRED", "TASK_STATE_WORKING",
                                                   "TASK_STATE_SUBMITTED"):
                    break
                await asyncio.sleep(0.1)
        assert task["status"]["state"] == "TASK_STATE_COMPLETED", task["status"]
        said = [p.get("text") for a in task["artifacts"] for p in a["parts"]]
        assert f"deleted {VALUE}" in said, said  # the tool got the argument as it was sent
