"""A configured upstream's sampling request reaches the client over no context of the conversation and
marked as that server's: to the client Sentinel is one server, so "thisServer" (let alone "allServers") would
have the client's model read the upstream every other server's results. Every path: a handshake-era
upstream's push to a handshake client and to a 2026-era client (a held call), a 2026-era upstream's input
request relayed to either.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.types import CreateMessageResult, TextContent

from sentinel_mcp.app.runtime import running_gateway

from .helpers import make_config
from .sampling_upstream import SYSTEM

UPSTREAM = str(Path(__file__).with_name("sampling_upstream.py"))


@pytest.mark.parametrize("era", ["handshake", "2026"])
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_upstreams_sampling_gets_no_context_and_is_marked_as_its_own(data_dir, era, mode):
    seen = []

    async def sampling(ctx, params):  # noqa: ANN001
        seen.append(params)
        return CreateMessageResult(role="assistant", model="m", content=TextContent(type="text", text="ok"))

    args = [UPSTREAM] if era == "handshake" else [UPSTREAM, "--modern-only"]
    servers = {"hs": {"command": sys.executable, "args": args}}
    async with running_gateway(make_config(data_dir, servers=servers)) as rt:
        up = rt.manager.upstreams["hs"]
        with anyio.fail_after(20):
            while up.state != "ready":
                await anyio.sleep(0.05)
        async with Client(rt.front.server, mode=mode, sampling_callback=sampling) as c:
            r = await c.call_tool("hs__peek", {})
    assert r.content[0].text == "peeked: ok", r.content[0].text
    (params,) = seen
    assert params.include_context == "none"  # asked for "allServers"
    assert params.system_prompt.startswith("[This request comes from the server hs through Sentinel, not")
    assert params.system_prompt.endswith(SYSTEM)
