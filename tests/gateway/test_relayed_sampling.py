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
from sentinel_mcp.core.display_text import is_hidden, shown

from .helpers import make_config
from .sampling_upstream import PROMPT, SMUGGLED, SYSTEM

SHOWN_TAIL = shown(SMUGGLED[1:], len(SMUGGLED)).text
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
    # what the model reads, the person approving the request sees: hidden characters made visible
    assert params.system_prompt.endswith(SYSTEM + "⟨U+E0061⟩" + SHOWN_TAIL)
    texts = [params.messages[0].content.text, params.messages[1].content[0].text]
    assert texts == [PROMPT + "⟨U+E0061⟩" + SHOWN_TAIL, "Sure⟨U+E0061⟩" + SHOWN_TAIL]
    for text in (params.system_prompt, *texts):
        assert not any(is_hidden(ch) for ch in text if ch != "\n"), repr(text)


def test_the_tools_and_tool_results_a_relayed_request_offers_the_model_are_shown_as_they_read():
    from mcp.types import (CreateMessageRequestParams, SamplingMessage, Tool, ToolResultContent,
                           ToolUseContent)

    from sentinel_mcp.gateway.relayed_sampling import relayed_sampling

    params = CreateMessageRequestParams(
        max_tokens=5,
        messages=[
            SamplingMessage(role="assistant", content=[ToolUseContent(type="tool_use", id="1", name="t",
                                                                      input={"q": SMUGGLED})]),
            SamplingMessage(role="user", content=ToolResultContent(
                type="tool_result", tool_use_id="1",
                content=[TextContent(type="text", text=f"r{SMUGGLED}")])),
        ],
        tools=[Tool(name="t", description=f"d{SMUGGLED}", input_schema={
            "type": "object", "properties": {"q": {"type": "string", "description": f"q{SMUGGLED}"}}})],
    )
    seen = relayed_sampling(params, "the server hs")
    (use,) = seen.messages[0].content
    assert use.input == {"q": SMUGGLED}  # the model's own call: its values as they were
    assert seen.messages[1].content.content[0].text == "r⟨U+E0061⟩" + SHOWN_TAIL
    (tool,) = seen.tools
    assert tool.name == "t" and tool.description == "d⟨U+E0061⟩" + SHOWN_TAIL
    assert tool.input_schema["properties"]["q"]["description"] == "q⟨U+E0061⟩" + SHOWN_TAIL
    assert relayed_sampling(params, None) is params  # Sentinel's own built-in: as it asked


@pytest.mark.parametrize("era", ["handshake", "2026"])
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_server_not_permitted_to_sample_reaches_no_model_and_the_refusal_is_recorded(data_dir, era,
                                                                                            mode):
    """``relays`` lists what a server may ask the client through Sentinel: without "sampling", its sampling
    request is refused on every path (a push, a 2026-era input request answered by push or returned to a
    2026-era client), the client's model is never asked, and the refusal is in the audit log."""
    seen = []

    async def sampling(ctx, params):  # noqa: ANN001
        seen.append(params)
        return CreateMessageResult(role="assistant", model="m", content=TextContent(type="text", text="ok"))

    args = [UPSTREAM] if era == "handshake" else [UPSTREAM, "--modern-only"]
    servers = {"hs": {"command": sys.executable, "args": args, "relays": ["elicitation", "roots"]}}
    async with running_gateway(make_config(data_dir, servers=servers)) as rt:
        up = rt.manager.upstreams["hs"]
        with anyio.fail_after(20):
            while up.state != "ready":
                await anyio.sleep(0.05)
        async with Client(rt.front.server, mode=mode, sampling_callback=sampling) as c:
            r = await c.call_tool("hs__peek", {})
        rows = await rt.audit.read(tail=10)
        assert up.pushes_not_permitted == 1
    assert seen == []
    assert r.is_error and "may not send sampling requests" in r.content[0].text, r
    said = " ".join(str(row.get("error") or "") + " " + str(row.get("reason") or "") for row in rows)
    assert "may not send sampling requests" in said, rows


def test_what_a_server_may_ask_through_sentinel_by_default():
    from sentinel_mcp.config import RemoteServer, StdioServer
    from sentinel_mcp.gateway.relay_permits import permitted_relays

    everything = {"elicitation", "sampling", "roots"}
    assert permitted_relays(StdioServer(command="x")) == everything
    assert permitted_relays(RemoteServer(url="http://127.0.0.1:9/mcp")) == everything
    assert permitted_relays(RemoteServer(url="https://tools.example.com/mcp")) == {"elicitation"}
    assert permitted_relays(RemoteServer(url="https://tools.example.com/mcp", relays=["roots"])) == {"roots"}
    assert permitted_relays(StdioServer(command="x", relays=[])) == set()
