"""Every inbox card says whose call it is: the principal Sentinel established for the call that asked (its
token's), never a name the caller wrote. The owner answers other agents' questions (an orchestrator's MCP
calls, its A2A tasks) beside its own, and the cards did not say which were whose: a person approving "the
call" could not tell their own from an agent's. Another person neither sees nor answers any of them. Real
Sentinel over HTTP (MCP, A2A and the console), real guard, real upstream."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import httpx2
import pytest
from tests.a2a.a2a_rig import user_message
from tests.console.console_rig import (ALICE, BOB, OWNER_TOKEN, console_config, csrf_of, http_sentinel,
                                      items_of, mcp_client, signed_in, text)

pytestmark = pytest.mark.timeout(240)
ITEM = re.compile(r'<li class="card item.*?</li>\n', re.S)
ASKER = re.compile(r'<strong class="asker">([^<]*)</strong>')


async def _rpc(http: httpx2.AsyncClient, base: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return (await http.post(base + "/a2a", json=body)).json()["result"]


def askers(page: str) -> dict[str, list[str]]:
    """Each listed item's id and the principal its card names (every name it names as the call's)."""
    out = {}
    for card in ITEM.findall(page):
        [item] = items_of(card)
        out[item] = ASKER.findall(card)
    return out


async def test_each_card_names_whose_call_it_is_and_another_person_answers_none(tmp_path) -> None:
    cfg = console_config(tmp_path)
    body = json.loads(cfg.read_text())
    body["sentinel"]["a2a"]["orchestrator_principal"] = "bob"  # bob is an agent: the owner answers for him
    cfg.write_text(json.dumps(body))
    tag = uuid.uuid4().hex[:8]
    with http_sentinel(cfg) as (base, _proc):
        async with mcp_client(base, BOB) as bob_mcp, mcp_client(base, OWNER_TOKEN) as owner_mcp, \
                httpx2.AsyncClient(timeout=60, headers={"A2A-Version": "1.0",
                                                        "Authorization": f"Bearer {BOB}"}) as bob_a2a:
            for c, who in ((bob_mcp, "bob"), (owner_mcp, "owner")):
                first = await c.call_tool("tb__delete_thing", {"name": f"{who}-mcp-{tag}"})
                assert first.is_error and "/console/inbox" in text(first), text(first)
            call = {"type": "tool_call", "tool_call_id": "tc-1", "name": "tb__delete_thing",
                    "args": {"name": f"bob-a2a-{tag}"}}
            sent = await _rpc(bob_a2a, base, "SendMessage", {"message": user_message({"data": call})})
            task = sent["task"]
            assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task["status"]
            async with signed_in(base, OWNER_TOKEN) as owner:
                page = await owner.wait_items(3)
                shown = askers(page)
                assert len(shown) == 3, shown
                for card in ITEM.findall(page):
                    [item] = items_of(card)
                    whose = "bob" if "bob-" in card else "owner"
                    assert shown[item] == [whose], (item, shown[item], card[:600])
                assert shown[f"a2a-{task['id']}"] == ["bob"]
                ids = list(shown)
            async with signed_in(base, ALICE) as alice:  # another person: sees none, answers none
                page = await alice.page("/console/inbox")
                assert not items_of(page) and tag not in page
                for item in ids:
                    r = await alice.post(f"/console/inbox/{item}", {"decision": "approve", "asked": "0" * 64},
                                         csrf=csrf_of(page))
                    assert r.status_code == 404, (item, r.status_code)
            async with signed_in(base, OWNER_TOKEN) as owner:
                assert set(items_of(await owner.page("/console/inbox"))) == set(ids)  # nothing answered
