"""An A2A task waiting for the user's answer shows its call's arguments as a held call's card does: the tool's
own secret arguments masked (``approval_arguments``: a property named as a secret, ``writeOnly``,
``format: password``, ``sentinel/sensitive``). Before, the task's card listed them as the peer sent them, so a
password a peer's call carried was on the page (and in every screenshot and shoulder's view of it). The tool
still gets the value as sent once approved. Real Sentinel over HTTP (A2A endpoint, console), real upstream."""

from __future__ import annotations

import asyncio
import json
import re
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx2
import pytest
from tests.a2a.a2a_rig import user_message
from tests.console.console_rig import (ALICE, BOB, console_config, http_sentinel, items_of, mcp_client,
                                      signed_in, text)

pytestmark = pytest.mark.timeout(240)
ITEM = re.compile(r'<li class="card item.*?</li>\n', re.S)
ARGS = re.compile(r'<dl class="args">(.*?)</dl>', re.S)
SERVER = Path(__file__).resolve().parent / "secret_argument_server.py"


async def _rpc(http: httpx2.AsyncClient, base: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return (await http.post(base + "/a2a", json=body)).json()["result"]


def secret_config(tmp_path: Path) -> Path:
    cfg = console_config(tmp_path)
    body = json.loads(cfg.read_text())
    body["mcpServers"]["sv"] = {"command": sys.executable, "args": [str(SERVER)]}
    cfg.write_text(json.dumps(body))
    return cfg


async def test_an_a2a_tasks_secret_argument_is_masked_on_its_card(tmp_path) -> None:
    cfg = secret_config(tmp_path)
    password = f"hunter2-{uuid.uuid4().hex}"
    with http_sentinel(cfg) as (base, _proc):
        headers = {"A2A-Version": "1.0", "Authorization": f"Bearer {ALICE}"}
        async with httpx2.AsyncClient(timeout=60, headers=headers) as peer:
            call = {"type": "tool_call", "tool_call_id": "tc-1", "name": "sv__set_password",
                    "args": {"account": "bank-account", "password": password}}
            task = (await _rpc(peer, base, "SendMessage", {"message": user_message({"data": call})}))["task"]
            assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task["status"]
            async with signed_in(base, ALICE) as person:
                page = await person.page("/console/inbox")
                [item] = [i for i in items_of(page) if i.startswith("a2a-")]
                [card] = [m for m in ITEM.findall(page) if f"/console/inbox/{item}" in m]
                [listed] = ARGS.findall(card)  # the card's statement of the call's arguments
                assert "bank-account" in listed and "password" in listed, listed
                assert password not in listed and password[8:20] not in listed, listed
                # nor in the question's text (the default policy's confirmation quoted every value)
                assert password[8:20] not in page, page[page.find(password[8:20]) - 300:][:600]
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
        # the tool got the value as sent (its length)
        assert f"password of bank-account set ({len(password)} characters)" in said, said


async def test_a_held_calls_secret_argument_is_in_neither_its_card_nor_its_question(tmp_path) -> None:
    """The default policy's confirmation ("Sentinel: allow sv__set_password(account=..., password=...)?")
    quoted every value, the tool's secret ones too: the card's arguments masked it, its question did not.
    The client that sent the call is told the same masked question; the tool gets the value as sent."""
    password = f"hunter2-{uuid.uuid4().hex}"
    with http_sentinel(secret_config(tmp_path)) as (base, _proc):
        async with signed_in(base, BOB) as person, mcp_client(base, BOB) as c:
            args = {"account": "bank-account", "password": password}
            first = await c.call_tool("sv__set_password", args)
            assert first.is_error and "/console/inbox" in text(first) and password[8:20] not in text(first)
            page = await person.wait_items(1)
            [item] = items_of(page)
            assert "bank-account" in page and "sv__set_password" in page
            assert password[8:20] not in page, page[page.find(password[8:20]) - 300:][:600]
            r = await person.post(f"/console/inbox/{item}", {"decision": "approve"})
            assert r.status_code == 303, r.text[:500]
            done = await c.call_tool("sv__set_password", args)  # the retry
            assert f"password of bank-account set ({len(password)} characters)" in text(done), text(done)
