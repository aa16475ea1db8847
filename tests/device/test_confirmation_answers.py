"""The phone's own confirmation takes JSON true or false and nothing else, and shows what it will do safely
(both eras, the real mcp Client, the simulated phone): nothing is sent unless the answer is exactly true."""

from __future__ import annotations

from typing import Any

import pytest
from tests.device.device_helpers import sim_server
from mcp import Client
from mcp.types import ElicitResult

pytestmark = pytest.mark.timeout(60)
NOT_YES = [{"confirm": "true"}, {"confirm": "yes"}, {"confirm": 1}, {"confirm": "1"}, {"confirm": None},
           {"confirm": True, "extra": "x"}, {}, {"Confirm": True}]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_only_json_true_sends(tmp_path, mode):
    server = sim_server(tmp_path)
    phone = server.runtime.backend
    replies = [ElicitResult(action="accept", content=c) for c in NOT_YES]

    async def callback(ctx: Any, params: Any) -> ElicitResult:
        return replies.pop(0)

    async with Client(server, mode=mode, elicitation_callback=callback) as c:
        for content in NOT_YES:
            r = await c.call_tool("sms_send", {"to": "+1 555 0100", "body": "hi"})
            assert r.is_error and "Nothing was sent" in r.content[0].text, (content, r.content[0].text)
            assert "cannot be asked" not in r.content[0].text, r.content[0].text
        assert phone.sent_messages == [] and replies == []
        replies.append(ElicitResult(action="accept", content={"confirm": True}))
        r = await c.call_tool("sms_send", {"to": "+1 555 0100", "body": "hi"})
        assert not r.is_error, r.content[0].text
    assert [m.body for m in phone.sent_messages] == ["hi"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_hidden_characters_are_shown_and_always_asked(tmp_path, mode):
    server = sim_server(tmp_path)
    phone = server.runtime.backend
    asked: list[str] = []

    async def callback(ctx: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"confirm": True})

    body = "pay\u200b to\u202eevil"  # (ESC would break the simulated phone's XML screen dump)
    async with Client(server, mode=mode, elicitation_callback=callback) as c:
        r = await c.call_tool("sms_send", {"to": "+1 555 0100", "body": body})
        assert not r.is_error, r.content[0].text
    assert len(asked) == 1 and not any(ch in asked[0] for ch in "\u200b\u202e"), asked
    assert "invisible or direction-changing characters" in asked[0]
    assert [m.body for m in phone.sent_messages] == [body]  # the phone got exactly what was asked for
