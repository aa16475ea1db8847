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


# The reply is re-read as strict JSON, whatever the backend promised: a key given twice lets the last answer
# win where a reader of the text sees the first (a REJECT that is read as an ACCEPT), and NaN passes a bound
# (NaN compares false both ways). Before, both were read as JSON.
@pytest.mark.parametrize("text", [
    '{"decision": "REJECT", "issues": [], "decision": "ACCEPT"}',
    'verdict: {"decision": "REJECT", "issues": [{"severity": "BLOCKER", "message": "m"}], '
    '"decision": "ACCEPT"}',
    '```json\n{"warnings": [], "missing_items": [], "quality_score": NaN}\n```',
    '{"warnings": [], "missing_items": [], "quality_score": Infinity}',
])
def test_a_reply_that_is_not_strict_json_holds_no_json(text):
    # refused saying why (a key twice, not finite), not "no JSON object": a model's retry is told what to mend
    refused = "the reply.s JSON is refused: .*(more than once|finite|NaN|Infinity)"
    with pytest.raises(ValueError, match=refused):
        extract_json(text)


def test_a_critic_reply_with_its_decision_twice_is_unreadable():
    from sentinel_mcp.swarm.agents.critic import CriticOutputError, parse_critic_reply
    from sentinel_mcp.swarm.backends.base import ModelReply

    reply = ModelReply(text='{"decision": "REJECT", "issues": [], "decision": "ACCEPT"}', json_data=None)
    with pytest.raises(CriticOutputError):
        parse_critic_reply(reply)


async def test_the_local_engines_output_is_read_strictly():
    from sentinel_mcp.swarm.backends.base import ModelRequest
    from sentinel_mcp.swarm.backends.llama_direct import LlamaDirectBackend
    from sentinel_mcp.llm.engine import Generation

    class Engine:  # a grammar-constrained output that broke the grammar's promise anyway
        async def generate(self, request, progress=None):
            return Generation('{"decision": "REJECT", "issues": [], "decision": "ACCEPT"}', 1, 1, "stop", "m",
                              "plain", 0.0, None)

    class Grammars:
        def get(self, name):
            return SimpleNamespace(text="root ::= \"{}\"")

    from types import SimpleNamespace

    backend = LlamaDirectBackend(Engine(), Grammars())
    reply = await backend.complete(ModelRequest(role="critic", system="s", prompt="p", grammar="critic"),
                                   lambda _m: None)
    assert reply.json_data is None  # the critic's parser then reports a reply without JSON
