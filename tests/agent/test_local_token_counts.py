"""The agent's token cap counts what the local ``llm`` built-in says each decision spent. A count that is no
count (negative, a string, a bool, a float, a number of 5,000 digits) was taken as it came: a negative one
lowered the run's total under the cap for good, a text one ended the run on a ValueError. Now only a positive
JSON integer counts, and never less than the text's own estimate (as for the OpenAI-compatible backend)."""

from __future__ import annotations

import pytest
from mcp.types import CallToolResult, TextContent

from sentinel_mcp.swarm.backends.base import ModelRequest, estimate_tokens
from sentinel_mcp.swarm.backends.llm_tool import LlmToolBackend

ANSWER = '{"action": "done", "text": "ok", "reasoning": "r"}'


@pytest.mark.parametrize("count", [-10**9, -1, 0, "12", "abc", "9" * 5000, True, 1.5, float("inf"), None,
                                   [5], {"n": 5}])
async def test_a_count_that_is_no_count_is_the_estimate(count):
    async def call_tool(name, arguments):
        data = {"text": ANSWER, "tokens": {"prompt": count, "completion": count}, "model": "m"}
        return CallToolResult(content=[TextContent(type="text", text=ANSWER)], structured_content=data)

    request = ModelRequest(role="agent", system="s", prompt="decide", max_tokens=64)
    reply = await LlmToolBackend(call_tool).complete(request, lambda _m: None)
    assert reply.prompt_tokens >= estimate_tokens(request.system + request.full_prompt) > 0
    assert reply.completion_tokens >= estimate_tokens(ANSWER) > 0
    assert reply.prompt_tokens < 10**6


async def test_a_real_count_counts():
    async def call_tool(name, arguments):
        data = {"text": ANSWER, "tokens": {"prompt": 900, "completion": 40}}
        return CallToolResult(content=[TextContent(type="text", text=ANSWER)], structured_content=data)

    reply = await LlmToolBackend(call_tool).complete(
        ModelRequest(role="agent", system="s", prompt="decide", max_tokens=64), lambda _m: None)
    assert (reply.prompt_tokens, reply.completion_tokens) == (900, 40)
