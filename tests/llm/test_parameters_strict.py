"""Sampling parameters are taken as what they are, never coerced: ``max_tokens`` true was one token, "7"
seven, 3.0 three; and the Cortex's in-process API took a NaN or infinite temperature, a negative one, and
seeds past llama.cpp's 32 bits (cut to their low bits: 2**32 + 5 sampled as 5) without a word."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from mcp import Client

from sentinel_mcp.core.builtin import BuiltinContext
from sentinel_mcp.llm.cortex import Cortex
from sentinel_mcp.llm.engine import LlamaEngine
from sentinel_mcp.llm.errors import InputRejected
from sentinel_mcp.llm.server import create_server
from sentinel_mcp.llm.settings import LlmSettings

pytest.importorskip("llama_cpp")


@pytest.fixture(scope="module")
def cortex(tiny_chat_model: Path):
    settings = LlmSettings(model=str(tiny_chat_model), n_ctx=2048, n_threads=1, seed=7)
    engine = LlamaEngine(settings)
    yield Cortex(settings, engine=engine)
    engine.close()


WRONG = [
    ("llm_generate", {"prompt": "hi", "max_tokens": True}),
    ("llm_generate", {"prompt": "hi", "max_tokens": "7"}),
    ("llm_generate", {"prompt": "hi", "max_tokens": 3.0}),
    ("llm_generate", {"prompt": "hi", "max_tokens": 2.5}),
    ("llm_generate", {"prompt": "hi", "temperature": True}),
    ("llm_generate", {"prompt": "hi", "temperature": "0.5"}),
    ("llm_generate", {"prompt": "hi", "max_tokens": 10**12}),
    ("llm_generate", {"prompt": "hi", "max_tokens": -1}),
    ("llm_extract", {"text": "x", "json_schema": {"type": "integer"}, "max_tokens": False}),
    ("llm_extract", {"text": "x", "json_schema": {"type": "integer"}, "max_tokens": "12"}),
]


async def test_the_tools_take_parameters_of_their_own_type_only(cortex: Cortex, tmp_path: Path) -> None:
    ctx = BuiltinContext("llm", tmp_path, cortex.settings.model_dump(exclude_none=True))
    async with Client(create_server(ctx, cortex=cortex)) as c:
        for tool, args in WRONG:
            r = await c.call_tool(tool, args)
            assert r.is_error, (tool, args, r.content[0].text)
        ok = await c.call_tool("llm_generate", {"prompt": "hi", "max_tokens": 2, "temperature": 1})
        assert not ok.is_error, ok.content[0].text


@pytest.mark.parametrize(
    "kwargs",
    [
        {"temperature": math.nan}, {"temperature": math.inf}, {"temperature": -0.5}, {"temperature": 2.5},
        {"temperature": True}, {"temperature": "0.2"},
        {"seed": 2**32}, {"seed": 2**64 + 5}, {"seed": -1}, {"seed": True}, {"seed": 1.0},
        {"max_tokens": True}, {"max_tokens": 2.0}, {"max_tokens": "3"}, {"max_tokens": 10**12},
    ],
)
async def test_the_cortex_refuses_parameters_of_wrong_type_or_range(cortex: Cortex, kwargs: dict) -> None:
    with pytest.raises(InputRejected):
        await cortex.generate("hi", **{"max_tokens": 2, **kwargs})


async def test_the_cortex_takes_parameters_at_their_bounds(cortex: Cortex) -> None:
    bounds = ({"temperature": 0}, {"temperature": 2.0}, {"seed": 0}, {"seed": 2**32 - 1}, {"max_tokens": 1})
    for kwargs in bounds:
        r = await cortex.generate("hi", **{"max_tokens": 2, **kwargs})
        assert r.generation.completion_tokens >= 1


def _deep(levels: int) -> object:
    value: object = 1
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize(
    "action",
    [{"a": _deep(100_000)}, {1: 2, "1": 3}, {"a": math.nan}, {"a": {1, 2}}, {"a": b"bytes"}],
    ids=["nested past the stack", "keys of two types", "NaN", "a set", "bytes"],
)
async def test_an_action_that_is_not_json_is_refused(cortex: Cortex, action: dict) -> None:
    """(an in-process caller's dict: RecursionError and TypeError went past every LlmError handler)"""
    with pytest.raises(InputRejected, match="action"):
        await cortex.classify_risk(action)


@pytest.mark.parametrize(
    "kwargs",
    [{"prompt": None}, {"prompt": 123}, {"prompt": b"hi"}, {"context": 7}, {"context": ["a"]},
     {"system": {"a": 1}}, {"system": b"be brief"}],
)
async def test_the_cortex_refuses_text_that_is_not_a_string(cortex: Cortex, kwargs: dict) -> None:
    """(an in-process caller's value: TypeError from len() or str methods went past every LlmError handler)"""
    args = {"prompt": "hi", "max_tokens": 2, **kwargs}
    with pytest.raises(InputRejected, match="must be text"):
        await cortex.generate(args.pop("prompt"), **args)
