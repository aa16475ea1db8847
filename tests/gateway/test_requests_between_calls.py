"""An upstream's request sent in no tool call (a question, a sampling request, roots: between calls, here
while Sentinel reads one of its resources) is refused, and no client is asked: nothing names whose it is,
and the one client connected may not be the one the upstream means. Upstreams over stdio and streamable HTTP
(handshake era: a 2026-era upstream cannot push), both eras of the real client.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import CreateMessageResult, ElicitResult, ListRootsResult, Root, TextContent

from sentinel_mcp.app.runtime import running_gateway
from tests.support.forked_upstreams import forked_spec

from .helpers import make_config, served_http

RELAY = str(Path(__file__).with_name("relay_server.py"))


async def _read_between(data_dir: Path, server: dict[str, Any], mode: str) -> tuple[str, list[str], int]:
    asked: list[str] = []

    async def elicit(ctx: Any, params: Any) -> ElicitResult:
        asked.append("elicitation")
        return ElicitResult(action="accept", content={"ok": True})

    async def sample(ctx: Any, params: Any) -> CreateMessageResult:
        asked.append("sampling")
        return CreateMessageResult(role="assistant", model="m", content=TextContent(type="text", text="ok"))

    async def roots(ctx: Any) -> ListRootsResult:
        asked.append("roots")
        return ListRootsResult(roots=[Root(uri="file:///home/user/secret-project")])  # type: ignore[arg-type]

    async with running_gateway(make_config(data_dir, servers={"rl": server})) as rt:
        up = rt.manager.upstreams["rl"]
        with anyio.fail_after(30):
            while up.state != "ready":
                await anyio.sleep(0.05)
        async with Client(rt.front.server, mode=mode, elicitation_callback=elicit, sampling_callback=sample,
                          list_roots_callback=roots) as c:
            await c.call_tool("rl__roots", {})  # a call before: the client is known to this upstream
            asked.clear()
            read = await c.read_resource("relay://between")
        return read.contents[0].text, asked, up.pushes_unrouted


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_upstreams_request_between_calls_is_refused_and_asked_of_no_one(data_dir, transport, mode):
    if transport == "stdio":
        stdio = forked_spec(RELAY)
        said, asked, unrouted = await _read_between(data_dir, stdio, mode)
    else:
        with served_http(RELAY) as url:
            said, asked, unrouted = await _read_between(data_dir, {"url": url}, mode)
    assert asked == []
    lines = [line for line in said.splitlines() if not line.startswith("[The server rl")]  # (own_voice)
    assert [line.split(":")[0] for line in lines] == ["elicitation", "sampling", "roots"], said
    for line in lines:
        assert "refused" in line and "no call to it is in progress" in line, said
    assert unrouted == 3


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_http_upstreams_request_on_its_own_stream_is_not_given_to_the_call_in_flight(data_dir, mode):
    """Over streamable HTTP a call's requests come on that call's own stream (read by the lean call path,
    which names the call); one on the server's standalone stream is about no call (MCP: it "SHOULD be
    unrelated to any concurrently-running request"). It was given to the one call in flight, whoever's it
    was, as a stdio push is (where nothing tells them apart); now it is refused and no client is asked."""
    asked: list[str] = []

    async def elicit(ctx: Any, params: Any) -> ElicitResult:
        asked.append("elicitation")
        return ElicitResult(action="accept", content={"ok": True})

    async def sample(ctx: Any, params: Any) -> CreateMessageResult:
        asked.append("sampling")
        return CreateMessageResult(role="assistant", model="m", content=TextContent(type="text", text="ok"))

    async def roots(ctx: Any) -> ListRootsResult:
        asked.append("roots")
        return ListRootsResult(roots=[Root(uri="file:///home/user/secret-project")])  # type: ignore[arg-type]

    with served_http(RELAY) as url:
        async with running_gateway(make_config(data_dir, servers={"rl": {"url": url}})) as rt:
            up = rt.manager.upstreams["rl"]
            with anyio.fail_after(30):
                while up.state != "ready":
                    await anyio.sleep(0.05)
            async with Client(rt.front.server, mode=mode, elicitation_callback=elicit,
                              sampling_callback=sample, list_roots_callback=roots) as c:
                r = await c.call_tool("rl__between", {})
                assert (await c.call_tool("rl__roots", {})).content[0].text == "file:///home/user/secret-project"
    assert asked == ["roots"]  # the call's own request only
    said = r.content[0].text
    lines = [line for line in said.splitlines() if not line.startswith("[The server rl")]
    assert [line.split(":")[0] for line in lines] == ["elicitation", "sampling", "roots"], said
    for line in lines:
        assert "refused" in line and "no call's stream" in line, said
