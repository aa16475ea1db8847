"""Over the HTTP front, with principals: alice's calls (both eras) wait for the first connection of an
upstream she may use; bob, who may not use it, is answered while it still connects, with the very words he
gets once it is up (its existence and its state show neither in his answer nor in when it comes).

The gateway's real HTTP app served by uvicorn on 127.0.0.1, real MCP clients, a real stdio upstream held at
its gate (gated_toolbox.py) until the test opens it."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from sentinel_mcp.app.http_app import build_http_app
from sentinel_mcp.app.runtime import Runtime, running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.identity.http_auth import http_auth_for

from .helpers import toolbox_stdio
from .test_first_connection_calls import gated, text, wait_until

pytestmark = pytest.mark.timeout(180)
ALICE = "alice-token-first-connection-0123"
BOB = "bob-token-first-connection-01234"
CAROL = "carol-token-first-connection-012"
MADE_UP = ["tb__echo", "nothing", "tb__nothing", "cx__nothing", "TB__echo"]


@contextlib.asynccontextmanager
async def served(raw: dict[str, Any], base_dir: Path) -> AsyncIterator[tuple[str, Runtime]]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = parse_config(raw, source="<test>", base_dir=base_dir)
    app, holder = build_http_app(running_gateway(config, startup_wait=0.1), host="127.0.0.1", port=port,
                                 auth=http_auth_for(config).authenticator)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        await wait_until(lambda: server.started or serving.done())
        if serving.done():
            serving.result()
        yield f"http://127.0.0.1:{port}/mcp", holder.runtime
    finally:
        server.should_exit = True
        await serving
        sock.close()


@contextlib.asynccontextmanager
async def client(url: str, token: str, mode: str) -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120)
    async with http, Client(streamable_http_client(url, http_client=http), mode=mode) as c:
        yield c


async def answers(c: Client) -> list[str]:
    got = []
    for name in MADE_UP:
        r = await c.call_tool(name, {})
        assert r.is_error, (name, r)
        got.append(" ".join(w for w in text(r).split() if not w.startswith(("dec_", "(decision"))))
    return got


async def test_alice_waits_for_her_upstreams_first_connection_bob_is_answered_at_once(data_dir, tmp_path):
    gate = tmp_path / "gate"
    raw = {"mcpServers": {"tb": gated(gate), "cx": toolbox_stdio()},
           "sentinel": {"data_dir": str(data_dir), "builtins": [],
                        "principals": [{"name": "alice", "token": ALICE},
                                       {"name": "bob", "token": BOB, "upstreams": ["cx"]},
                                       # every upstream, but tools of cx only
                                       {"name": "carol", "token": CAROL, "tools": ["cx__*"]}]}}
    async with served(raw, tmp_path) as (url, rt):
        tb, cx = rt.manager.upstreams["tb"], rt.manager.upstreams["cx"]
        await wait_until(lambda: cx.state == "ready")
        got: dict[str, Any] = {}

        async def alice(mode: str) -> None:
            async with client(url, ALICE, mode) as c:
                got[mode] = await c.call_tool("tb__echo", {"text": mode})

        async with anyio.create_task_group() as tg:
            tg.start_soon(alice, "legacy")
            tg.start_soon(alice, "auto")
            await wait_until(lambda: rt.gateway.calls_in_flight.get("alice", 0) == 2 or got)
            assert got == {}
            bobs = {}
            for who, mode in [(t, m) for t in (BOB, CAROL) for m in ("legacy", "auto")]:
                async with client(url, who, mode) as c:
                    bobs[who, mode] = await answers(c)
            # answered while tb still makes its first connection, alice's calls still waiting for it
            assert tb.state == "connecting" and not tb.first_listed.is_set() and got == {}
            gate.touch()
        assert {m: text(r) for m, r in got.items()} == {"legacy": "legacy", "auto": "auto"}
        assert not any(r.is_error for r in got.values())
        for (who, mode), before in bobs.items():  # the same words once tb is up: nothing of it was told
            async with client(url, who, mode) as c:
                assert await answers(c) == before, mode
            assert all("not connected" not in t for t in before), before


async def test_another_principals_tool_and_no_tool_wait_alike(data_dir, tmp_path):
    """Bob waits for his two upstreams' first connections: a name that is alice's tool (there, but not his)
    waits as long as a name nobody has, till the last of his ends; else the first ending told him alice's name
    exists. Each answer notes whether bob's second upstream was in the catalog when it came."""
    gate1, gate2 = tmp_path / "gate1", tmp_path / "gate2"
    raw = {"mcpServers": {"tb": toolbox_stdio(), "b1": gated(gate1), "b2": gated(gate2)},
           "sentinel": {"data_dir": str(data_dir), "builtins": [],
                        "principals": [{"name": "alice", "token": ALICE},
                                       {"name": "bob", "token": BOB, "upstreams": ["b1", "b2"]}]}}
    async with served(raw, tmp_path) as (url, rt):
        b1, b2 = rt.manager.upstreams["b1"], rt.manager.upstreams["b2"]
        await wait_until(lambda: rt.manager.upstreams["tb"].state == "ready")
        seen: dict[str, tuple[str, bool]] = {}

        async def bob(name: str) -> None:
            async with client(url, BOB, "auto") as c:
                r = await c.call_tool(name, {})
                seen[name] = (text(r), b2.first_listed.is_set())

        async with anyio.create_task_group() as tg:
            tg.start_soon(bob, "tb__echo")
            tg.start_soon(bob, "zz__nothing")
            await wait_until(lambda: rt.gateway.calls_in_flight.get("bob", 0) == 2 or seen)
            assert seen == {}
            gate1.touch()
            await wait_until(lambda: b1.first_listed.is_set())
            gate2.touch()
        assert all(after_b2 for _, after_b2 in seen.values()), seen
        assert all("unknown tool" in said for said, _ in seen.values()), seen
