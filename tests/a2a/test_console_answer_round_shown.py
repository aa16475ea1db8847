"""An A2A task's questions answered in the console count only for the round the page showed: the wait for the
task's record may span a new round whose questions share the shown ones' keys (another wording, another
call), and the person's yes to the first is not a yes to that. Real gateway (HTTP app with A2A mounted), a
real stdio upstream; the console's own check (``inbox_pages.a2a_asks``) given to the service as it does."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from tests.a2a.a2a_rig import user_message
from tests.a2a.served_gateway import gateway_with_a2a

from sentinel_mcp.a2a.jsonrpc import RpcError
from sentinel_mcp.console.inbox_pages import a2a_asks, asked_digest
from sentinel_mcp.core.decision import Answer
from sentinel_mcp.paths import PROJECT_ROOT

pytestmark = pytest.mark.timeout(120)
TOOLBOX = PROJECT_ROOT / "tests" / "gateway" / "toolbox_server.py"
PEER = "peer-token-0123456789"


def _questions(record: Any) -> list[dict[str, Any]]:
    for part in record.task.status.message.parts:
        if isinstance(part.data, dict) and part.data.get("type") == "input_request":
            return part.data["questions"]
    raise AssertionError("no input request on the task")


async def test_an_answer_counts_only_for_the_round_it_was_shown(tmp_path: Path) -> None:
    written = tmp_path / "written.txt"
    raw = {
        "mcpServers": {"b": {"command": sys.executable, "args": [str(TOOLBOX)], "prefix": ""}},
        "sentinel": {"data_dir": str(tmp_path), "builtins": [],
                     "principals": [{"name": "peer", "token": PEER}], "a2a": {"name": "round-test"}},
    }
    async with gateway_with_a2a(raw, tmp_path) as gw:
        headers = {"A2A-Version": "1.0", "Authorization": f"Bearer {PEER}"}
        async with httpx2.AsyncClient(timeout=60, headers=headers) as http:
            body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": user_message(
                {"data": {"type": "tool_call", "tool_call_id": "tc-1", "name": "write_marker",
                          "args": {"path": str(written), "text": "peer"}}})}}
            task = (await http.post(gw.base + "/a2a", json=body)).json()["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task
        service = gw.holder.a2a_service
        record = await service.store.held(task["id"], "peer")
        questions = _questions(record)
        keys = record.pending.question_keys
        shown = asked_digest([q for q in questions if q.get("key") in keys])
        yes = {k: Answer.model_validate({"action": "accept", "content": {"approve": True}}) for k in keys}
        # a new round, asked while the person's answer waited for the record: same keys, other words
        questions[0]["message"] = str(questions[0].get("message", "")) + " (and every other file too)"
        with pytest.raises(RpcError):
            await service.answer_as_user(task["id"], "peer", yes, lambda now: a2a_asks(now, shown))
        assert record.pending is not None and not written.exists()  # still waiting, nothing ran
        # answered as it reads now, it is taken
        now = asked_digest([q for q in _questions(record) if q.get("key") in keys])
        await service.answer_as_user(task["id"], "peer", yes, lambda r: a2a_asks(r, now))
        for _ in range(200):
            if written.exists():
                break
            await asyncio.sleep(0.05)
        assert written.read_text() == "peer\n"
