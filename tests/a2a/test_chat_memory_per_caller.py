"""What one caller's chats hold is bounded in bytes over all its channels and connections: each channel was
bounded (``chat_max_turns``) but a caller holds 16 channels on each of 32 connections, 40 turns of 8 KB each
(about 160 MB of one peer's words in the gateway). The oldest turns go first; other callers keep theirs; a
closed channel or connection gives its bytes back."""

from __future__ import annotations

import pytest
from tests.a2a.a2a_rig import open_port, serve

from sentinel_mcp.a2a.chat import ChatCloseParams, ChatHub, ChatMessageParams, ChatOpenParams
from sentinel_mcp.a2a.settings import A2ASettings

pytestmark = pytest.mark.timeout(60)
BUDGET = 64 * 1024


def held(hubs: list[ChatHub], caller: str) -> int:
    return sum(
        len(text.encode()) for hub in hubs for ch in hub.channels.values() if ch.owner == caller
        for _, text in ch.turns
    )


async def test_a_callers_chats_hold_at_most_its_byte_budget_oldest_first():
    settings = A2ASettings(chat_max_turns=20, chat_bytes_per_caller=BUDGET)
    async with open_port() as port, serve(port, settings) as srv:
        hubs = [ChatHub(srv.service) for _ in range(4)]  # four connections of one peer
        channels = [(hub, (await hub.open(ChatOpenParams(), "peer"))["channel_id"]) for hub in hubs
                    for _ in range(4)]
        other = ChatHub(srv.service)
        theirs = (await other.open(ChatOpenParams(), "other"))["channel_id"]
        await other.say(ChatMessageParams(channel_id=theirs, text="mine " * 100), "other")
        for round_ in range(3):
            for i, (hub, cid) in enumerate(channels):
                await hub.say(ChatMessageParams(channel_id=cid, text=f"{round_}-{i}-" + "x" * 8000), "peer")
        assert held(hubs, "peer") <= BUDGET, held(hubs, "peer")
        newest_hub, newest = channels[-1]
        assert newest_hub.channels[newest].turns[-1][1].startswith("2-15-")  # the newest turn is kept
        first_hub, first = channels[0]
        assert all(not t.startswith("0-") for _, t in first_hub.channels[first].turns)  # the oldest went
        assert other.channels[theirs].turns[0][1].startswith("mine")  # another caller's are its own

        # a closed channel, and a closed connection, give their bytes back
        await hubs[0].close(ChatCloseParams(channel_id=first), "peer")
        for hub in hubs:
            hub.close_all()
        assert srv.service.chat_memory.held("peer") == 0
        fresh = ChatHub(srv.service)
        cid = (await fresh.open(ChatOpenParams(), "peer"))["channel_id"]
        for i in range(5):
            await fresh.say(ChatMessageParams(channel_id=cid, text=f"{i}-" + "y" * 8000), "peer")
        assert len(fresh.channels[cid].turns) == 5  # room again: nothing of the closed ones is counted


async def test_every_callers_chats_together_are_bounded_and_the_adder_pays():
    settings = A2ASettings(chat_bytes_per_caller=BUDGET, chat_bytes_total=2 * BUDGET)
    async with open_port() as port, serve(port, settings) as srv:
        hubs = {name: ChatHub(srv.service) for name in ("a", "b", "c", "d")}
        opened = {name: (await hub.open(ChatOpenParams(), name))["channel_id"] for name, hub in hubs.items()}
        for i in range(12):
            for name, hub in hubs.items():
                await hub.say(ChatMessageParams(channel_id=opened[name], text=f"{i}-" + "z" * 8000), name)
        memory = srv.service.chat_memory
        assert memory.total <= 2 * BUDGET and all(memory.held(n) <= BUDGET for n in hubs)
        assert memory.total == sum(held([hub], name) + 4 * len(hub.channels[opened[name]].turns)
                                   for name, hub in hubs.items())
        assert all(hub.channels[opened[n]].turns[-1][1].startswith("11-") for n, hub in hubs.items())
