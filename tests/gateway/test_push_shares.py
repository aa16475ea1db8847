"""The requests an upstream pushes that wait for answers at once (``MAX_PUSHES_WAITING``) are shared fairly by
the principals whose calls they belong to: one alone may fill them (a flood is still refused past the bound,
test_push_flood.py), but a principal holding fewer than its share takes the place of the newest waiting
request of the principal holding the most, which is refused. Before, alice's calls whose questions her
client never answered held all of them and bob's call's question was refused at once.

A real gateway in-process, an in-process built-in that asks by pushed elicitation (``relay_server.py``: a
push names its call exactly), real calls through ``Upstream.call_tool`` with the callers' links."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from mcp.types import ElicitRequestParams, ElicitResult, ErrorData

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.caller_link import CallerLink
from sentinel_mcp.gateway import upstream_relays

from .helpers import make_config
from .test_relays import mount_relay

pytestmark = pytest.mark.timeout(120)
BOUND = 4


class Caller(CallerLink):
    """A client that answers "decline" once ``answer`` is set (at once, if it is already)."""

    def __init__(self, who: str, answer: asyncio.Event) -> None:
        self.who, self.answer = who, answer
        self.asked = 0

    async def elicit(self, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        self.asked += 1
        await self.answer.wait()
        return ElicitResult(action="decline")


async def _until(predicate: Any) -> None:
    while not predicate():
        await asyncio.sleep(0.01)


async def test_one_principals_unanswered_questions_leave_another_its_share(data_dir, monkeypatch) -> None:
    monkeypatch.setattr(upstream_relays, "MAX_PUSHES_WAITING", BOUND)
    async with running_gateway(make_config(data_dir, servers={})) as rt:
        up = await mount_relay(rt)
        never, now = asyncio.Event(), asyncio.Event()
        now.set()
        alice, bob = Caller("alice", never), Caller("bob", now)
        hers = [asyncio.ensure_future(up.call_tool("form_words", {}, link=alice, principal="alice"))
                for _ in range(BOUND + 2)]
        await _until(lambda: alice.asked == BOUND and up.pushes_refused == 2)  # alone: all of them, no more
        mine = await up.call_tool("form_words", {}, link=bob, principal="bob")
        assert mine.content[0].text == "form_words:decline:[]", mine.content  # bob was asked, and answered
        assert bob.asked == 1 and up.pushes_refused == 3  # one of hers gave its place
        never.set()
        texts = [r.content[0].text for r in await asyncio.gather(*hers)]
        assert texts.count("form_words:decline:[]") == BOUND - 1, texts  # the others were answered
        assert up._pushes_waiting == 0 and not up._waiting_pushes.by


async def test_a_principal_at_its_share_takes_no_more(data_dir, monkeypatch) -> None:
    monkeypatch.setattr(upstream_relays, "MAX_PUSHES_WAITING", BOUND)
    async with running_gateway(make_config(data_dir, servers={})) as rt:
        up = await mount_relay(rt)
        never = asyncio.Event()
        alice, bob = Caller("alice", never), Caller("bob", never)
        calls = [asyncio.ensure_future(up.call_tool("form_words", {}, link=alice, principal="alice"))
                 for _ in range(BOUND)]
        await _until(lambda: alice.asked == BOUND)
        calls += [asyncio.ensure_future(up.call_tool("form_words", {}, link=bob, principal="bob"))
                  for _ in range(BOUND)]
        await _until(lambda: up.pushes_refused == BOUND)  # two of hers gave way, then two of his were refused
        assert bob.asked == BOUND // 2
        assert sorted(len(v) for v in up._waiting_pushes.by.values()) == [BOUND // 2, BOUND // 2]
        never.set()
        await asyncio.gather(*calls)
        assert up._pushes_waiting == 0 and not up._waiting_pushes.by
