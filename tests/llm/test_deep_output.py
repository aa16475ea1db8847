"""The model's output is hostile too: a schema with an open object (``{"type": "object"}``, as the agent's
tool-call arguments are) compiles to a recursive grammar, so a constrained output may nest deeper than
``json.loads`` recurses. That is an invalid output (``OutputInvalid``, the error every caller handles),
never a ``RecursionError`` out of the cortex."""

from __future__ import annotations

import pytest

from sentinel_mcp.llm.cortex import _parse_and_validate
from sentinel_mcp.llm.engine import Generation
from sentinel_mcp.llm.errors import OutputInvalid
from sentinel_mcp.llm.output_models import ToolCallOutput

DEEP = "[" * 50_000 + "]" * 50_000
OPEN = {"type": "object", "properties": {"arguments": {"type": "object"}}}


def generation(text: str) -> Generation:
    return Generation(text, 1, 1, "stop", "m", "plain", 0.0, None)


@pytest.mark.parametrize("text", [
    DEEP,
    '{"arguments": ' + "{\"a\": " * 50_000 + "1" + "}" * 50_000 + "}",
    '{"tool": "t", "arguments": {"a": ' + DEEP + "}}",
])
@pytest.mark.parametrize("model,schema", [(None, OPEN), (ToolCallOutput, None)])
def test_output_nested_past_the_parser_is_invalid_output(text, model, schema):
    with pytest.raises(OutputInvalid, match="nested"):
        _parse_and_validate(generation(text), model, schema)


class _DeepEngine:
    """An engine whose grammar-constrained output nests past the parser (the backend's only input here)."""

    async def generate(self, request, progress=None):
        return generation('{"tool": "t", "arguments": {"a": ' + DEEP + "}}")


async def test_the_direct_backends_deep_output_is_no_json_data():
    from sentinel_mcp.swarm.backends.base import ModelRequest
    from sentinel_mcp.swarm.backends.llama_direct import LlamaDirectBackend

    backend = LlamaDirectBackend(_DeepEngine())
    reply = await backend.complete(ModelRequest(role="agent", system="s", prompt="p", grammar="tool_call"),
                                   lambda _m: None)
    assert reply.json_data is None  # unparsed: the agent's own parser reports it as an unusable answer
