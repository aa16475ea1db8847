"""A configured upstream's sampling request reaches the client over no context of the conversation and
marked as that server's: to the client Sentinel is one server, so "thisServer" (let alone "allServers") would
have the client's model read the upstream every other server's results. Every path: a handshake-era
upstream's push to a handshake client and to a 2026-era client (a held call), a 2026-era upstream's input
request relayed to either.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import anyio
import pytest
import pytest_asyncio
from mcp import Client
from mcp.types import CreateMessageResult, TextContent

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.display_text import is_hidden, shown
from tests.support.held_context import held
from tests.support.forked_upstreams import forked_spec

from .helpers import make_config, served_http
from .sampling_upstream import PROMPT, SMUGGLED, SYSTEM

SHOWN_TAIL = shown(SMUGGLED[1:], len(SMUGGLED)).text
UPSTREAM = str(Path(__file__).with_name("sampling_upstream.py"))
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.mark.parametrize("era", ["handshake", "2026"])
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_upstreams_sampling_gets_no_context_and_is_marked_as_its_own(data_dir, era, mode):
    seen = []

    async def sampling(ctx, params):  # noqa: ANN001
        seen.append(params)
        return CreateMessageResult(role="assistant", model="m", content=TextContent(type="text", text="ok"))

    args = [UPSTREAM] if era == "handshake" else [UPSTREAM, "--modern-only"]
    servers = {"hs": forked_spec(*args)}
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
    servers = {"hs": {**forked_spec(*args), "relays": ["elicitation", "roots"]}}
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


# the gateways of the greedy rows, one per (transport, era of the upstream, cap); both eras of client use it
GREEDY = [(transport, era, cap) for cap in (None, 100) for era in ("handshake", "2026")
          for transport in ("stdio", "http")]


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=GREEDY,
                        ids=[f"{cap}-{era}-{transport}" for transport, era, cap in GREEDY])
async def greedy(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A gateway over the greedy upstream, shared by the rows of both eras of client (its start was most of a
    row's time): the upstream keeps nothing between calls, and each row's call is a connection of its own."""
    transport, era, cap = request.param
    flags = ["--greedy"] + ([] if era == "handshake" else ["--modern-only"])
    with contextlib.ExitStack() as stack:
        if transport == "stdio":
            server: dict[str, Any] = forked_spec(UPSTREAM, *flags)
        else:
            server = {"url": stack.enter_context(served_http(UPSTREAM, *flags))}
        if cap is not None:
            server["max_sampling_tokens"] = cap
        cfg = make_config(tmp_path_factory.mktemp("greedy") / "state", servers={"hs": server})
        async for rt in held(running_gateway(cfg)):
            up = rt.manager.upstreams["hs"]
            with anyio.fail_after(20):
                while up.state != "ready":
                    await anyio.sleep(0.05)
            yield rt, cap


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_greedy_sampling_request_reaches_the_client_within_its_bounds(greedy: Any, mode: str) -> None:
    """An upstream asks for 10^9 tokens, a temperature of 1e300, 10,000 stop sequences and model hints,
    provider ``metadata``, a system prompt in Sentinel's voice: the client gets the server's
    ``max_sampling_tokens`` (4096 by default), no temperature, the first few stop sequences and hints that
    read as written, no metadata, the prompt after the server's mark. Every path, over stdio and over
    streamable HTTP (the lean call path reads a push off the call's own stream), both eras of client.
    (Priorities out of 0..1 the SDK refuses on the wire; the table below has them.)"""
    rt, cap = greedy
    seen = []

    async def sampling(ctx, params):  # noqa: ANN001
        seen.append(params)
        return CreateMessageResult(role="assistant", model="m", content=TextContent(type="text", text="ok"))

    async with Client(rt.front.server, mode=mode, sampling_callback=sampling) as c:
        r = await c.call_tool("hs__peek", {})
    assert r.content[0].text == "peeked: ok", r.content[0].text
    (params,) = seen
    _assert_narrowed(params, cap)


def _assert_narrowed(params: Any, cap: int | None) -> None:
    from sentinel_mcp.gateway.sampling_fields import (DEFAULT_MAX_SAMPLING_TOKENS, MAX_HINTS,
                                                      MAX_STOP_SEQUENCES)

    assert params.system_prompt.startswith("[This request comes from the server hs through Sentinel, not")
    assert params.meta is None
    assert params.max_tokens == (cap or DEFAULT_MAX_SAMPLING_TOKENS)  # asked for 10^9
    assert params.temperature is None and params.metadata is None and params.task is None
    assert params.include_context == "none"
    assert params.stop_sequences == [f"stop{i}" for i in range(MAX_STOP_SEQUENCES)]
    prefs = params.model_preferences
    assert [h.name for h in prefs.hints] == [f"m{i}" for i in range(MAX_HINTS)]
    assert (prefs.cost_priority, prefs.speed_priority, prefs.intelligence_priority) == (1.0, 0.5, 0.0)


def test_a_sampling_request_is_rebuilt_from_the_fields_mcp_defines():
    from mcp.types import CreateMessageRequestParams, ModelHint, ModelPreferences, SamplingMessage

    from sentinel_mcp.gateway.sampling_fields import narrowed_sampling

    said = [SamplingMessage(role="user", content=TextContent(type="text", text="hi"))]
    table = [  # (asked, relayed): each field as an upstream may send it
        ({"max_tokens": -5}, {"max_tokens": 1}),
        ({"max_tokens": 50}, {"max_tokens": 50}),
        ({"max_tokens": 101}, {"max_tokens": 100}),
        ({"temperature": 0.0}, {"temperature": 0.0}),
        ({"temperature": 2.0}, {"temperature": 2.0}),
        ({"temperature": -0.1}, {"temperature": None}),
        ({"temperature": float("nan")}, {"temperature": None}),
        ({"temperature": float("inf")}, {"temperature": None}),
        ({"stop_sequences": ["", "\x1b[2J", "a\u2066b", "ok"]}, {"stop_sequences": ["ok"]}),
        ({"include_context": "thisServer"}, {"include_context": "none"}),
        ({"include_context": None}, {"include_context": None}),
        ({"metadata": {"a": 1}}, {"metadata": None}),
        ({"task": {"ttl": 10**9}}, {"task": None}),
        ({"model_preferences": ModelPreferences(cost_priority=-1e300, speed_priority=1.5,
                                                intelligence_priority=0.25)},
         {"model_preferences": ModelPreferences(intelligence_priority=0.25)}),
        ({"model_preferences": ModelPreferences(hints=[ModelHint(name="claude\u200b"), ModelHint(name=None),
                                                       ModelHint(name="sonnet")], cost_priority=1.0)},
         {"model_preferences": ModelPreferences(hints=[ModelHint(name="sonnet")], cost_priority=1.0)}),
    ]
    for asked, relayed in table:
        params = CreateMessageRequestParams.model_validate(
            {"messages": said, "max_tokens": 10, "_meta": {"progressToken": 7, "x": 1}, **asked})
        got = narrowed_sampling(params, 100)
        for field, value in relayed.items():
            assert getattr(got, field) == value, (asked, getattr(got, field))
        assert got.meta is None and got.messages == said, asked
