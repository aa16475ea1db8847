"""A grammar that leaves no token allowed is a tool error: it aborted the process in llama.cpp's sampler.

llama.cpp never lets a token carry a NUL character, so a grammar asking for one (a schema's ``const``,
``enum`` value or property name holding ``\\u0000``) has no token to go on with. In llama-cpp-python's sampler
chain the grammar then marked every token -inf, the next stages picked one anyway, and llama.cpp threw on
accepting it ("Unexpected empty grammar stack") across its C interface: ``std::terminate``. Reached on the
default configuration by any schema llguidance refuses (an unknown ``format``, ``uniqueItems``): 60 bytes
of a client's schema killed the gateway.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.llm.cortex import Cortex
from sentinel_mcp.llm.engine import GenerationRequest, LlamaEngine
from sentinel_mcp.llm.errors import GrammarError, SchemaError
from sentinel_mcp.llm.settings import LlmSettings

pytestmark = pytest.mark.timeout(300)

NUL = "\u0000"
REFUSED = "cannot write what the grammar asks for|cannot be decoded with bounded cost"
# each asks for a NUL where it cannot be escaped by the grammar; the first two on llguidance's default path
# (it refuses them: llama.cpp's sampler runs), every one on llama.cpp's sampler
DEAD_ENDS = {
    "const-unknown-format": {"const": NUL, "format": "no-such-format"},
    "key-unique-items": {
        "type": "object", "properties": {NUL: {"type": "integer"}}, "required": [NUL], "uniqueItems": True,
    },
    "enum-only-nul": {"enum": [NUL, f"{NUL}{NUL}"], "format": "x"},
    "nested-const": {"type": "array", "items": {"const": f"a{NUL}"}, "minItems": 1, "uniqueItems": True},
}
USER = [{"role": "user", "content": "Answer."}]


@pytest.mark.parametrize("sampler", ["llguidance", "llama_cpp"])
@pytest.mark.parametrize("case", sorted(DEAD_ENDS))
async def test_a_schema_no_token_can_write_is_refused_and_the_model_goes_on(
    tiny_settings: LlmSettings, case: str, sampler: str
):
    engine = LlamaEngine(tiny_settings.model_copy(update={"grammar_sampler": sampler}))
    cortex = Cortex(engine.settings, engine=engine)
    try:
        schema = DEAD_ENDS[case]
        # on llguidance's default path a caller's schema llguidance cannot take is refused before the model
        # runs (caller_grammars.py: never on llama.cpp's sampler); on llama.cpp's chosen one, at the dead end
        with pytest.raises((GrammarError, SchemaError), match=REFUSED):
            for seed in range(3):  # every seed: the dead end is the grammar's, not the sample's
                await cortex.generate("Answer.", json_schema=schema, max_tokens=40, seed=seed)
        # the same engine serves the next call, constrained or not
        r = await cortex.generate("Rate it.", grammar="risk", max_tokens=3000, seed=4)
        assert r.data is not None
        g = await engine.generate(GenerationRequest(USER, max_tokens=4))
        assert g.completion_tokens >= 1
    finally:
        engine.close()


async def test_a_gbnf_literal_nul_is_refused_on_llama_cpps_sampler(tiny_settings: LlmSettings):
    engine = LlamaEngine(tiny_settings.model_copy(update={"grammar_sampler": "llama_cpp"}))
    try:
        nul_grammars = (
            'root ::= "\\x00"\n', 'root ::= "ab" [\\x00]\n', 'root ::= "a" ("\\u0000" | "\\x00")+\n'
        )
        for gbnf in nul_grammars:
            request = GenerationRequest(USER, max_tokens=10, grammar=gbnf, grammar_label="nul")
            with pytest.raises(GrammarError, match="cannot write what the grammar asks for"):
                await engine.generate(request)
    finally:
        engine.close()


async def test_llama_cpps_sampler_still_writes_what_the_grammar_allows(tiny_settings: LlmSettings):
    """The masked loop over llama.cpp's grammar: every output of a schema with escapes, enums and a length
    bound parses and validates, with the same seed giving the same text."""
    engine = LlamaEngine(tiny_settings.model_copy(update={"grammar_sampler": "llama_cpp"}))
    cortex = Cortex(engine.settings, engine=engine)
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 12},
            "kind": {"enum": ["a\tb", "c\u00e9", "\u2603"]},
            "n": {"type": "integer"},  # llama.cpp's converter leaves value bounds to the check after
        },
        "required": ["name", "kind", "n"],
    }
    try:
        texts = []
        for seed in (1, 2, 3, 1):
            r = await cortex.generate("Answer.", json_schema=schema, max_tokens=200, seed=seed)
            assert r.generation.sampler == "llama_cpp" and set(r.data) == {"name", "kind", "n"}
            texts.append(r.text)
        assert texts[0] == texts[3]
    finally:
        engine.close()


async def test_the_gateway_lives_through_a_nul_schema(data_dir: Path, tiny_chat_model: Path):
    config = parse_config(
        {
            "mcpServers": {},
            "sentinel": {
                "data_dir": str(data_dir),
                "builtins": ["llm"],
                "llm": {"model": str(tiny_chat_model), "n_ctx": 1024, "n_threads": 1, "seed": 5},
            },
        },
        source="<test>",
        base_dir=data_dir,
    )
    async with running_gateway(config) as rt, Client(rt.front.server) as c:
        r = await c.call_tool(
            "llm__llm_generate", {"prompt": "Answer.", "json_schema": DEAD_ENDS["const-unknown-format"]}
        )
        assert r.is_error and re.search(REFUSED, r.content[0].text), r.content[0].text
        r = await c.call_tool("llm__llm_generate", {"prompt": "Say hello.", "max_tokens": 4})
        assert not r.is_error, r.content[0].text
