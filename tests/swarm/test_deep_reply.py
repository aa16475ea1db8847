"""A model's reply nested deeper than the JSON parser recurses holds no JSON object: ``extract_json`` says so
(ValueError, which every role handles as a reply without JSON), never a RecursionError."""

from __future__ import annotations

import pytest

from sentinel_mcp.swarm.backends.base import extract_json

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("text", [DEEP, "```json\n" + DEEP + "\n```", '{"a": ' + DEEP + "}",
                                  "here: {" + '"a": ' + DEEP + "}"])
def test_a_reply_nested_past_the_parser_holds_no_json(text):
    with pytest.raises(ValueError, match="no JSON object"):
        extract_json(text)


def test_a_plain_reply_still_parses():
    assert extract_json('sure: {"decision": "ACCEPT", "issues": []}') == {"decision": "ACCEPT", "issues": []}


async def test_the_llm_tools_text_nested_past_the_parser_is_its_text():
    from types import SimpleNamespace

    from sentinel_mcp.swarm.backends.base import ModelRequest
    from sentinel_mcp.swarm.backends.llm_tool import LlmToolBackend

    async def call_tool(name, arguments):  # a result with no structured content: its text is read as JSON
        return SimpleNamespace(is_error=False, structured_content=None, content=[SimpleNamespace(text=DEEP)])

    reply = await LlmToolBackend(call_tool).complete(ModelRequest(role="agent", system="s", prompt="p"),
                                                     lambda _m: None)
    assert reply.text == DEEP and reply.json_data is None
