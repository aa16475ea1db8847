"""A hostile upstream floods its caller with requests mid-call (2,000 elicitations at once): at most
``MAX_PUSHES_WAITING`` are relayed and wait for answers at once (through the gateway, at most the call's
``MAX_QUESTIONS_PER_CALL`` are ever put to its client), the rest are refused at once; every one gets an
answer, the call ends, and the upstream's next call works. A real stdio upstream process
(``hostile_stdio_upstream.py``), down the lean path and the SDK's, and through the whole gateway to a real
client.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import ElicitRequestParams, ElicitResult, ErrorData

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.caller_link import CallerLink
from sentinel_mcp.gateway.midcall_answers import MAX_QUESTIONS_PER_CALL
from sentinel_mcp.gateway.upstream import Upstream
from sentinel_mcp.gateway.upstream_relays import MAX_PUSHES_WAITING
from tests.gateway.helpers import make_config
from tests.gateway.hostile_stdio_upstream import FLOOD
from tests.gateway.test_lean_stdio import HOSTILE, ROOT, _with_upstream

pytestmark = pytest.mark.timeout(240)
HOLD = 3.0  # seconds the caller holds the first questions (the flood arrives well within it)


class Counting:
    """Holds every question until a while after the first (the whole flood has arrived by then), then
    answers; keeps how many it held at once."""

    def __init__(self) -> None:
        self.now = self.most = self.asked = 0
        self.first: float | None = None

    async def __call__(self, *_: Any) -> ElicitResult:
        self.now += 1
        self.asked += 1
        self.most = max(self.most, self.now)
        if self.first is None:
            self.first = anyio.current_time()
        try:
            await anyio.sleep(max(0.0, self.first + HOLD - anyio.current_time()))
            return ElicitResult(action="accept", content={"word": "w"})
        finally:
            self.now -= 1


class CountingLink(CallerLink):
    who = "the test's caller"

    def __init__(self, counting: Counting) -> None:
        self.counting = counting

    async def elicit(self, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        return await self.counting()


def _check(got: dict[str, int], counting: Counting, most: int = MAX_PUSHES_WAITING) -> None:
    assert sum(got.values()) == FLOOD, got  # every request answered
    assert got.get("accept", 0) == counting.asked, (got, counting.asked)
    assert got.get("error", 0) > 0, got  # refused at once while the bound was reached
    assert counting.most == most, counting.most  # never more held at once


@pytest.mark.parametrize("lean", [True, False])
def test_a_flood_of_pushed_requests_is_bounded(lean: bool) -> None:
    counting = Counting()

    async def body(up: Upstream) -> dict[str, int]:
        r = await up.call_tool("push_flood", {}, link=CountingLink(counting))
        assert not r.is_error, r
        got = json.loads(r.content[0].text)
        assert (await up.call_tool("noop", {})).content[0].text == "ok"  # still answers
        assert up._pushes_waiting == 0  # every slot given back
        return got

    _check(anyio.run(lambda: _with_upstream(HOSTILE, body, protocol="legacy", lean=lean)), counting)


async def test_a_flood_through_the_gateway_asks_the_client_a_bounded_number_at_once(data_dir) -> None:
    counting = Counting()
    # a loaded machine starts its process (an interpreter, the SDK's imports) past the gateway's start-up wait
    # (15 s) and even past the default connect_timeout (20 s): the call waits until its tool is listed
    servers = {"h": {"command": HOSTILE[0], "args": HOSTILE[1:], "cwd": str(ROOT), "protocol": "legacy",
                     "connect_timeout": 180}}
    async with running_gateway(make_config(data_dir, servers)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=counting) as c:
            with anyio.fail_after(180):
                while "h__push_flood" not in {t.name for t in (await c.list_tools()).tools}:
                    await anyio.sleep(0.2)
            r = await c.call_tool("h__push_flood", {})
            assert not r.is_error, r.content
            got = json.loads(r.content[0].text)
            # through the gateway the call's own bound is the lower: at most MAX_QUESTIONS_PER_CALL of its
            # questions are ever put to its client (midcall_answers.py), the rest refused at once
            _check(got, counting, most=MAX_QUESTIONS_PER_CALL)
            assert counting.asked == MAX_QUESTIONS_PER_CALL
            lines = rt.metrics.render(rt.catalog_health).splitlines()
            assert f'sentinel_upstream_pushes_refused_total{{upstream="h"}} {got["error"]}' in lines
            assert (await c.call_tool("h__noop", {})).content[0].text == "ok"
