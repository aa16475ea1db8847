"""``sentinel_why_not`` answers for the call the caller would make: its arguments judged as the call path
judges them (``judged_arguments.py``: the schema's defaults filled, undeclared keys refused, the argument
form). The pay upstream's ``transfer`` declares ``currency="BTC"``; the guard lets an absent currency pass
as USD. Asked as given, why-not said "allow" for a call the gateway then refused; a key the schema does not
declare is refused before any guard, and why-not says so. Real gateway, real stdio upstream, both eras."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config

from .pay_probe import arguments, pay_config

pytestmark = pytest.mark.timeout(180)
CASES: list[tuple[dict[str, Any], bool]] = [
    ({"amount": 500}, True),  # the default BTC: past the guard's 10
    ({"amount": 500.0}, True),
    ({"amount": 500, "currency": "USD"}, False),
    ({"amount": 5}, False),
    ({"amount": 500, "evil": True}, True),  # undeclared: refused before any guard
    ({"amount": 500, "currency ": "USD"}, True),
    ({"amount": 500, "Currency": "USD"}, True),
    ({"amount": 500, "currency\u200b": "USD"}, True),
    ({"amount": "500"}, True),  # the schema's type
]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_why_not_judges_the_arguments_the_call_is_judged_on(tmp_path: Path, mode: str) -> None:
    config = parse_config(pay_config(tmp_path, builtins=["sentinel"]), base_dir=str(tmp_path))
    async with running_gateway(config) as rt, Client(rt.front.server, mode=mode) as c:
        for args, refused in CASES:
            why = await c.call_tool("sentinel__sentinel_why_not",
                                    {"tool": "pay__transfer", "arguments": args})
            assert not why.is_error, why
            said = json.loads(why.content[0].text)
            called = await c.call_tool("pay__transfer", args)
            # the look and the call agree, and each is what the schema's default makes it
            assert (said["decision"] != "allow") == bool(called.is_error) == refused, (args, said, called)
    assert arguments(tmp_path) == [{"amount": 500, "currency": "USD"}, {"amount": 5, "currency": "BTC"}]
