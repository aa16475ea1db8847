"""A catalog change is told to the principals whose view of the catalog it changed, and to no other: an
upstream only alice may use (a principal's ``upstreams``) that changes its tools, say because alice called it,
tells alice's sessions and listen streams, never bob's (bob's ``tools/list_changed`` would say that alice's
upstream moved, and when: what alice does, to bob). A change bob can see still reaches him.

Order, not time, says "never": bob's stream carries a resource update he subscribed to, caused after alice
was told of her upstream's change; any notice of it to bob would have come first on his stream.

A real Sentinel over HTTP; the crossed upstream (subscriptions) and two shifting upstreams (they add a tool
when asked, and say so) over stdio; real MCP clients in both eras."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ResourceUpdatedNotification, ToolListChangedNotification

from .identity_rig import ALICE, BOB, http_sentinel

pytestmark = pytest.mark.timeout(180)
CROSSED = Path(__file__).with_name("crossed_server.py")
SHIFTING = Path(__file__).resolve().parent.parent / "gateway" / "shifting_upstream.py"


def _config(tmp: Path) -> Path:
    cfg = tmp / "sentinel.json"
    stdio = {"command": sys.executable}
    cfg.write_text(json.dumps({
        "mcpServers": {"cx": {**stdio, "args": [str(CROSSED)]},
                       "mine": {**stdio, "args": [str(SHIFTING)]},  # alice's alone
                       "ours": {**stdio, "args": [str(SHIFTING)]}},
        "sentinel": {"data_dir": str(tmp / "state"), "builtins": [],
                     "principals": [{"name": "alice", "token": ALICE, "upstreams": ["cx", "mine", "ours"]},
                                    {"name": "bob", "token": BOB, "upstreams": ["cx", "ours"]}]},
    }))
    return cfg


class Heard:
    """What one handshake-era client was told, in order."""

    def __init__(self) -> None:
        self.got: list[str] = []
        self.changed = asyncio.Event()
        self.updated = asyncio.Event()

    async def message(self, message: Any) -> None:
        if isinstance(message, ToolListChangedNotification):
            self.got.append("tools changed")
            self.changed.set()
        elif isinstance(message, ResourceUpdatedNotification):
            self.got.append(f"updated:{message.params.uri}")
            self.updated.set()


def _client(base: str, token: str, mode: str, heard: Heard | None = None) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    return Client(streamable_http_client(f"{base}/mcp", http_client=http), mode=mode,
                  message_handler=heard.message if heard else None)


async def _wait(event: asyncio.Event) -> None:
    await asyncio.wait_for(event.wait(), 60)
    event.clear()


async def test_a_change_of_an_upstream_bob_cannot_use_is_never_told_to_his_session(tmp_path: Path) -> None:
    with http_sentinel(_config(tmp_path)) as (base, _proc):
        alice_heard, bob_heard = Heard(), Heard()
        async with (_client(base, ALICE, "legacy", alice_heard) as alice,
                    _client(base, BOB, "legacy", bob_heard) as bob):
            await bob.subscribe_resource("doc://bob")
            for n in range(3):  # alice's upstream changes, each time after bob's update of the round before
                await alice.call_tool("mine__grow", {"name": f"alices_{n}", "path": str(tmp_path / "m")})
                await _wait(alice_heard.changed)
                await alice.call_tool("cx__touch", {"uri": "doc://bob"})
                await _wait(bob_heard.updated)
            assert bob_heard.got == ["updated:doc://bob"] * 3, bob_heard.got
            assert "mine__alices_0" not in {t.name for t in (await bob.list_tools()).tools}
            # a change bob can see reaches him (whoever caused it), before his next update
            await alice.call_tool("ours__grow", {"name": "shared", "path": str(tmp_path / "o")})
            await _wait(alice_heard.changed)
            await _wait(bob_heard.changed)
            await alice.call_tool("cx__touch", {"uri": "doc://bob"})
            await _wait(bob_heard.updated)
            assert "ours__shared" in {t.name for t in (await bob.list_tools()).tools}
    assert bob_heard.got == ["updated:doc://bob"] * 3 + ["tools changed", "updated:doc://bob"], bob_heard.got


async def test_a_change_of_an_upstream_bob_cannot_use_is_never_heard_on_his_listen_stream(
        tmp_path: Path) -> None:
    """Both on 2026-07-28: the bus tells every stream of a change in one pass, so alice hearing of it means
    bob's stream would have had it before the update caused after."""
    with http_sentinel(_config(tmp_path)) as (base, _proc):
        async with _client(base, ALICE, "auto") as alice, _client(base, BOB, "auto") as bob:
            async with (alice.listen(tools_list_changed=True) as hers,
                        bob.listen(tools_list_changed=True, resource_subscriptions=["doc://bob"]) as his):
                heard: list[str] = []

                async def next_event(sub: Any, into: list[str]) -> None:
                    with anyio.fail_after(60):
                        async for event in sub:
                            into.append(getattr(event, "uri", type(event).__name__))
                            return

                for n in range(3):
                    await alice.call_tool("mine__grow", {"name": f"alices_{n}", "path": str(tmp_path / "m")})
                    await next_event(hers, [])
                    await alice.call_tool("cx__touch", {"uri": "doc://bob"})
                    await next_event(his, heard)
                assert heard == ["doc://bob"] * 3, heard
                await alice.call_tool("ours__grow", {"name": "shared", "path": str(tmp_path / "o")})
                await next_event(hers, [])
                await alice.call_tool("cx__touch", {"uri": "doc://bob"})
                await next_event(his, heard)
                await next_event(his, heard)
    assert heard == ["doc://bob"] * 3 + ["ToolsListChanged", "doc://bob"], heard
