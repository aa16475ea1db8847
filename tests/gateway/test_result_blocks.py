"""A result (or a prompt) of more content blocks than a client shows is an upstream's bomb: each block is
shown with care (an upstream's text in Sentinel's voice gets an attribution), and 100,000 of them, 2.7 MB,
held the gateway's event loop for 10 s: every other caller waited, and the health checks of the other
upstreams timed out. A result or prompt past ``MAX_CONTENT_BLOCKS`` is refused before any block is looked
at, with Sentinel's own answer, recorded in the audit log; one at the bound is shown as always."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway.shown_result import MAX_CONTENT_BLOCKS

from .helpers import make_config

UPSTREAM = str(Path(__file__).with_name("block_bomb_upstream.py"))


@pytest.mark.timeout(120)
async def test_a_result_of_too_many_blocks_is_refused_before_it_is_shown(data_dir):
    servers = {"bo": {"command": sys.executable, "args": [UPSTREAM]}}
    async with running_gateway(make_config(data_dir, servers=servers)) as rt:
        assert await rt.manager.upstreams["bo"].wait_ready(20)
        async with Client(rt.front.server, mode="legacy") as c:
            ok = await c.call_tool("bo__blocks", {"n": MAX_CONTENT_BLOCKS})
            assert not ok.is_error and len(ok.content) == MAX_CONTENT_BLOCKS
            bomb = await c.call_tool("bo__blocks", {"n": 50 * MAX_CONTENT_BLOCKS})
            assert bomb.is_error and len(bomb.content) == 1, len(bomb.content)
            assert "content blocks" in bomb.content[0].text and bomb.meta["sentinel/error"] == "result_blocks"
            prompt = await c.get_prompt("bo__blocks", {"n": str(MAX_CONTENT_BLOCKS)})
            assert len(prompt.messages) == MAX_CONTENT_BLOCKS
            with pytest.raises(MCPError, match="messages"):
                await c.get_prompt("bo__blocks", {"n": str(50 * MAX_CONTENT_BLOCKS)})
            read = await c.read_resource(f"bomb://many/{MAX_CONTENT_BLOCKS}")
            assert len(read.contents) == MAX_CONTENT_BLOCKS
            with pytest.raises(MCPError, match="resource contents"):
                await c.read_resource(f"bomb://many/{50 * MAX_CONTENT_BLOCKS}")
        rows = await rt.audit.read(tail=5)
    assert rows[-1]["outcome"] == "tool_error" and "content blocks" in (rows[-1]["error"] or ""), rows[-1]
