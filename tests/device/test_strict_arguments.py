"""A device tool takes each argument in its own JSON type only: a coordinate is a JSON integer, never the
string "100", the float 100.0 or ``true`` (which lax validation read as 1: a swipe from x=1), a flag is a
JSON boolean, never "yes"; the gateway's rulebase refuses them (``device.pl``), and so does the built-in run
on its own. Nothing is sent for a refused call; the same calls with honest types go through. Simulated phone,
real MCP client."""

from __future__ import annotations

import pytest
from tests.device.device_helpers import Answers, connect, sim_server

pytestmark = pytest.mark.timeout(60)

SWIPE = {"x1": 100, "y1": 500, "x2": 100, "y2": 1500}
LOOSE = [
    ("swipe", SWIPE | {"x1": "100"}),
    ("swipe", SWIPE | {"x1": 100.0}),
    ("swipe", SWIPE | {"x1": True}),
    ("swipe", SWIPE | {"y2": False}),
    ("swipe", SWIPE | {"duration_ms": "300"}),
    ("screen_read", {"page": "2"}),
    ("screen_read", {"page": True}),
    ("timer_set", {"seconds": "60"}),
    ("timer_set", {"seconds": 60.0}),
    ("alarm_set", {"hour": "7", "minute": 30}),
    ("alarm_set", {"hour": 7, "minute": True}),
    ("notes_search", {"limit": "5"}),
    ("sms_list", {"limit": True}),
]


def sent(phone) -> list[list[str]]:
    return [c for c in phone.commands if c[:1] in (["input"], ["am"])]


async def test_an_argument_in_another_json_type_is_refused(tmp_path):
    server = sim_server(tmp_path)  # one phone for every case: the suite's time is short
    phone = server.runtime.backend
    async with connect(server, "legacy", Answers(*["yes"] * len(LOOSE))) as client:
        for tool, args in LOOSE:
            r = await client.call_tool(tool, args)
            assert r.is_error, (tool, args, r.content[0].text)
            assert sent(phone) == [], (tool, args)


async def test_the_same_calls_with_honest_types_go_through(tmp_path):
    server = sim_server(tmp_path)
    async with connect(server, "legacy", Answers("yes", "yes", "yes")) as client:
        honest = [("swipe", SWIPE), ("screen_read", {"page": 1}), ("timer_set", {"seconds": 60}),
                  ("notes_search", {"limit": 5}), ("wait_for", {"text": "Messages", "timeout_s": 1})]
        for tool, args in honest:
            r = await client.call_tool(tool, args)
            assert not r.is_error, (tool, r.content[0].text)
