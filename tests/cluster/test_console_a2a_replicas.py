"""An A2A task waiting for its principal's answer on replica A, in the console inbox on replica B (two real
replicas, subprocesses, on one real PostgreSQL): shown there (a person's console sticks to one replica; it
listed only the tasks that replica held, so A's questions never reached it), answered there once (B takes
the task over and its call runs once), shown to nobody else. An answer counts only for the round it was
shown: given on A for a round B has since moved on from, it is refused and nothing runs again."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.a2a.a2a_rig import user_message
from tests.console.console_rig import (ALICE, BOB, answer_fields, console_config, csrf_of, http_sentinel,
                                       items_of, signed_in)

pytestmark = pytest.mark.timeout(240)
KEY = "console-a2a-test-seal-key-0123456789abcdef"
HEADERS = {"A2A-Version": "1.0"}


def replica_config(tmp: Path, url: str, name: str) -> Path:
    cfg = console_config(tmp)
    body = json.loads(cfg.read_text())
    body["sentinel"].update(store=url, cluster={"replica": name, "seal_key": KEY})
    body["sentinel"]["a2a"].pop("task_db", None)  # tasks in the shared store (the rig keeps them in memory)
    cfg.write_text(json.dumps(body))
    return cfg


async def rpc(base: str, token: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    async with httpx2.AsyncClient(timeout=60) as http:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        r = await http.post(base + "/a2a", json=body, headers={**HEADERS, "Authorization": f"Bearer {token}"})
    assert r.status_code == 200, r.text
    return r.json()


def delete(name: str) -> dict[str, Any]:
    return user_message({"data": {"type": "tool_call", "tool_call_id": "d1", "name": "tb__delete_thing",
                                  "args": {"name": name}}})


async def state(base: str, task_id: str) -> dict[str, Any]:
    return (await rpc(base, ALICE, "GetTask", {"id": task_id}))["result"]


async def test_an_a2a_task_waiting_on_one_replica_is_answered_in_the_console_of_another(
        tmp_path: Path, pg_url: str) -> None:
    a_dir, b_dir = tmp_path / "a", tmp_path / "b"
    a_dir.mkdir()
    b_dir.mkdir()
    with http_sentinel(replica_config(a_dir, pg_url, "replica-a")) as (base_a, _pa), \
            http_sentinel(replica_config(b_dir, pg_url, "replica-b")) as (base_b, _pb):
        async with signed_in(base_b, ALICE) as alice_b, signed_in(base_a, ALICE) as alice_a, \
                signed_in(base_b, BOB) as bob_b:
            name = f"a-{uuid.uuid4().hex[:6]}"
            task = (await rpc(base_a, ALICE, "SendMessage", {"message": delete(name)}))["result"]["task"]
            assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task
            page = await alice_b.wait_items(1)  # waiting on A, shown on B
            [item] = items_of(page)
            assert item == "a2a-" + task["id"] and name in page
            bob_page = await bob_b.page("/console/inbox")  # nobody else's
            assert item not in bob_page and name not in bob_page
            fields = {"decision": "approve", **answer_fields(page, item)}
            r = await bob_b.post(f"/console/inbox/{item}", fields, csrf=csrf_of(bob_page))
            assert r.status_code == 404
            shown_on_a = await alice_a.page("/console/inbox")  # the round as A shows it
            assert item in items_of(shown_on_a)
            r = await alice_b.post(f"/console/inbox/{item}", fields)  # answered on B: B takes it, runs it
            assert r.status_code == 303, r.text[:500]
            done: dict[str, Any] = {}
            for _ in range(4):  # rounds (a reason, then the confirmation), bounded
                for _ in range(300):  # bounded
                    done = await state(base_b, task["id"])
                    if done["status"]["state"] != "TASK_STATE_WORKING":
                        break
                    await asyncio.sleep(0.1)
                if done["status"]["state"] != "TASK_STATE_INPUT_REQUIRED":
                    break
                page = await alice_b.wait_items(1)  # the next round, held on B now
                r = await alice_b.post(f"/console/inbox/{item}",
                                       {"decision": "approve", **answer_fields(page, item)})
                assert r.status_code == 303, r.text[:500]
            assert done["status"]["state"] == "TASK_STATE_COMPLETED", done
            # acted on and read at A, whose own copy of the task still waits: as stored (finished by B), never
            # as A's old round (a cancel "took", a read waited for ever)
            cancel = await rpc(base_a, ALICE, "CancelTask", {"id": task["id"]})
            assert cancel.get("error", {}).get("code") == -32002, cancel  # not cancelable: it completed
            assert (await state(base_a, task["id"]))["status"]["state"] == "TASK_STATE_COMPLETED"
            listed = (await rpc(base_a, ALICE, "ListTasks", {}))["result"]["tasks"]
            assert [t["status"]["state"] for t in listed if t["id"] == task["id"]] == ["TASK_STATE_COMPLETED"]
            assert (await state(base_b, task["id"]))["status"]["state"] == "TASK_STATE_COMPLETED"
            assert name in json.dumps(done.get("artifacts"))
            # the round A showed, answered on A after B answered it: refused, nothing runs again
            r = await alice_a.post(f"/console/inbox/{item}", {"decision": "approve",
                                                               **answer_fields(shown_on_a, item)},
                                   csrf=csrf_of(shown_on_a))
            assert r.status_code in (404, 409), r.status_code
            assert (await state(base_b, task["id"]))["status"]["state"] == "TASK_STATE_COMPLETED"
            for person in (alice_a, alice_b):
                assert item not in items_of(await person.page("/console/inbox"))
