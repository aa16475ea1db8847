"""A caller's share of the task store is bytes, what the memory and the journal hold: a task's JSON as
UTF-8. It was counted in characters, so a caller whose messages were astral characters (4 bytes each in
UTF-8) held four times its share, three-byte text three times, two-byte text twice. The texts are sent raw
(UTF-8 on the wire, not ``\\u`` escapes: a frame holds as many bytes either way). Real HTTP on 127.0.0.1,
two API keys."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx2
import pytest
from tests.a2a.a2a_rig import open_port, serve, user_message

from sentinel_mcp.a2a.settings import A2ASettings

pytestmark = pytest.mark.timeout(120)

ALICE = {"X-API-Key": "alice-key-123", "A2A-Version": "1.0"}
BOB = {"X-API-Key": "bobby-key-123", "A2A-Version": "1.0"}
KEYS = {"alice": "alice-key-123", "bob": "bobby-key-123"}
# one character of each UTF-8 length beyond ASCII, and mixed text (a frame of 64 KiB holds ~60 000 bytes)
SPELLINGS = {"astral": "\U0001F600", "cjk": "\u4e2d", "latin": "\u00e9", "mixed": "a\u00e9\u4e2d\U0001F600"}


async def _raw_rpc(http: httpx2.AsyncClient, url: str, method: str, params: Any,
                   headers: dict[str, str]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": str(uuid.uuid4()), "method": method, "params": params}
    r = await http.post(url, content=json.dumps(body, ensure_ascii=False).encode(),
                        headers={**headers, "content-type": "application/json"})
    assert r.status_code == 200, r.text[:500]
    return r.json()


def _bytes_held(store: Any, owner: str) -> int:
    return sum(len(r.task.model_dump_json(exclude_none=True).encode()) for r in store.all_records()
               if r.owner == owner)


def _text_of(char: str, limit: int = 58_000) -> str:
    return char * (limit // len(char.encode()))


@pytest.mark.parametrize("spelling", SPELLINGS)
async def test_a_callers_multibyte_messages_stay_within_its_share_of_bytes(spelling: str) -> None:
    settings = A2ASettings(name="t", max_frame_bytes=64 * 1024, api_keys=KEYS)
    big = {"data": {"junk": _text_of(SPELLINGS[spelling])}}
    async with open_port() as port, serve(port, settings) as srv, httpx2.AsyncClient(timeout=30) as http:
        for _ in range(40):
            out = await _raw_rpc(http, srv.rpc_url, "SendMessage", {"message": user_message(big)}, BOB)
            assert out["result"]["task"]["status"]["state"] == "TASK_STATE_REJECTED", out
        held = _bytes_held(srv.service.store, "bob")
    assert held <= settings.task_bytes_per_caller, (held, settings.task_bytes_per_caller)


@pytest.mark.parametrize("spelling", SPELLINGS)
async def test_continuing_a_task_with_multibyte_text_meets_the_share_of_bytes(spelling: str) -> None:
    settings = A2ASettings(name="t", max_frame_bytes=64 * 1024, api_keys=KEYS)
    ask = {"data": {"type": "tool_call", "tool_call_id": "c", "name": "tools__delete_file",
                    "args": {"path": "/x"}}}
    async with open_port() as port, serve(port, settings) as srv, httpx2.AsyncClient(timeout=30) as http:
        task = (await _raw_rpc(http, srv.rpc_url, "SendMessage", {"message": user_message(ask)}, BOB))
        task = task["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        how = next(p["data"] for p in task["status"]["message"]["parts"]
                   if p.get("data", {}).get("type") == "input_request")
        key = how["questions"][0]["key"]
        refused, rounds = None, 0
        for rounds in range(1, 60):
            again = user_message({"data": {"answers": {key: {"action": "cancel"}}}},
                                 {"text": _text_of(SPELLINGS[spelling])}, task_id=task["id"])
            out = await _raw_rpc(http, srv.rpc_url, "SendMessage", {"message": again}, BOB)
            if "error" in out:
                refused = out["error"]
                break
            assert out["result"]["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        held = _bytes_held(srv.service.store, "bob")
    assert refused is not None and refused["code"] == -32004 and "your share" in refused["message"], refused
    assert held <= settings.task_bytes_per_caller, (held, settings.task_bytes_per_caller)
    # bytes, not characters: the share of ~1 MiB took about 18 messages of ~58 000 bytes, whatever the text
    assert rounds <= settings.task_bytes_per_caller // 58_000 + 2, rounds
