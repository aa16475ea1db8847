"""Text that is not Unicode text (a lone surrogate: stdlib ``json`` reads ``"\\udc80"`` as one, and the
gateway's stdio reader is stdlib ``json``) is refused with its reason wherever a caller's text goes: the
prompt, the context, the system prompt, the text to extract from, the action and its context. It crashed
the tool (``UnicodeEncodeError`` when the prompt was tokenized: "Error executing tool llm_generate", a
traceback in the log) and, through the engine's in-process API (the swarm's local backend), raised past
every ``LlmError`` handler."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from sentinel_mcp.core.builtin import BuiltinContext
from sentinel_mcp.llm.cortex import Cortex
from sentinel_mcp.llm.engine import GenerationRequest, LlamaEngine
from sentinel_mcp.llm.errors import InputRejected
from sentinel_mcp.llm.server import create_server

pytest.importorskip("llama_cpp")

NOT_TEXT = ["hi \udc80", "\ud800", "x\udfff\ud800y", "a\ud83d", "\udbff\udfff\udc00"]


@pytest.fixture(scope="module")
def llm_server(tiny_chat_model: Path, tmp_path_factory: pytest.TempPathFactory):
    from sentinel_mcp.llm.settings import LlmSettings

    settings = LlmSettings(model=str(tiny_chat_model), n_ctx=2048, n_threads=1, seed=7)
    engine = LlamaEngine(settings)
    ctx = BuiltinContext("llm", tmp_path_factory.mktemp("llm"), settings.model_dump(exclude_none=True))
    cortex = Cortex(settings, engine=engine)
    yield create_server(ctx, cortex=cortex), cortex
    engine.close()


def _calls(bad: str) -> list[tuple[str, dict]]:
    schema = {"type": "integer"}
    return [
        ("llm_generate", {"prompt": bad, "max_tokens": 2}),
        ("llm_generate", {"prompt": "hi", "context": bad, "max_tokens": 2}),
        ("llm_generate", {"prompt": "hi", "system": bad, "max_tokens": 2}),
        ("llm_extract", {"text": bad, "json_schema": schema, "max_tokens": 4}),
        ("llm_classify_risk", {"action": {"type": bad}}),
        ("llm_classify_risk", {"action": {"type": "click"}, "context": bad}),
    ]


async def test_every_tool_refuses_text_that_is_not_unicode_with_its_reason(llm_server) -> None:
    server, _ = llm_server
    async with Client(server) as c:
        for bad in NOT_TEXT:
            for tool, args in _calls(bad):
                r = await c.call_tool(tool, args)
                assert r.is_error, (tool, args)
                assert "surrogate" in r.content[0].text, (tool, args, r.content[0].text)
        ok = await c.call_tool("llm_generate", {"prompt": "hi", "max_tokens": 2})  # the tool still serves
        assert not ok.is_error


async def test_an_action_key_that_is_not_unicode_is_refused(llm_server) -> None:
    """(mcp's client cannot send one as a key: it serialises arguments with pydantic; stdlib json can)"""
    _, cortex = llm_server
    for bad in NOT_TEXT:
        with pytest.raises(InputRejected, match="surrogate"):
            await cortex.classify_risk({bad: 1})


async def test_the_engine_refuses_it_as_an_llm_error(llm_server) -> None:
    engine = llm_server[1].engine
    for bad in NOT_TEXT:
        for messages in ([{"role": "user", "content": bad}],
                         [{"role": "system", "content": bad}, {"role": "user", "content": "hi"}]):
            with pytest.raises(InputRejected, match="surrogate"):
                await engine.generate(GenerationRequest(messages, max_tokens=1))
    gen = await engine.generate(GenerationRequest([{"role": "user", "content": "hi"}], max_tokens=1))
    assert gen.completion_tokens == 1
