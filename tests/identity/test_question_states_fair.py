"""A principal minting question states by the thousand (a 2026-era call that asks, again and again) never
pushes another principal's open question out of the nonce book: alice's answer, given after bob's flood,
still counts. Before, the book dropped the oldest state of anyone when full, so alice's answer was refused as
"already used" (and her person asked again, for as long as bob kept minting).

A real Sentinel over HTTP (the bookings server, the bookings rulebase's cancel_reason question), raw 2026-era
requests on 127.0.0.1, the book's capacity lowered to 20 through ``SENTINEL_CAP_REQUEST_STATES``."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
from tests.identity.identity_rig import ALICE, BOB, http_sentinel, write_config

pytestmark = pytest.mark.timeout(180)

CAPACITY = 20
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "fair", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}
CANCEL = {"name": "bk__cancel_booking", "arguments": {"booking_id": "BK-789"}}


async def _cancel(http: httpx2.AsyncClient, url: str, token: str, rid: int, **more: Any) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
               "Content-Type": "application/json", "MCP-Protocol-Version": "2026-07-28",
               "Mcp-Method": "tools/call", "Mcp-Name": "bk__cancel_booking"}
    body = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {**CANCEL, **more, "_meta": META}}
    answer = (await http.post(url, json=body, headers=headers)).json()
    assert "result" in answer, answer
    return dict(answer["result"])


async def test_another_principals_flood_leaves_an_open_question_answerable(tmp_path, monkeypatch):
    monkeypatch.setenv("SENTINEL_CAP_REQUEST_STATES", str(CAPACITY))
    with http_sentinel(write_config(tmp_path)) as (base, _proc):
        url = f"{base}/mcp"
        async with httpx2.AsyncClient(timeout=60) as http:
            asked = await _cancel(http, url, ALICE, 1)
            assert asked["resultType"] == "input_required", asked
            [key] = [k for k in asked["inputRequests"] if "cancel_reason" in k]
            for i in range(CAPACITY + 10):  # bob's questions, never answered
                minted = await _cancel(http, url, BOB, 100 + i)
                assert minted["resultType"] == "input_required", minted
            answers = {key: {"action": "accept", "content": {"answer": "health"}}}
            state = asked["requestState"]
            later = await _cancel(http, url, ALICE, 2, inputResponses=answers, requestState=state)
            shown = str(later)
            assert "already used" not in shown, shown
            # her answer counted: the next round asks only the confirmation, not the reason again
            assert later["resultType"] == "input_required", shown
            assert not any("cancel_reason" in k for k in later["inputRequests"]), shown
