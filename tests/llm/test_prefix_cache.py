"""KV snapshots of shared prompt preambles on the tiny GGUF: restored across alternating calls, bounded."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")

from sentinel_mcp.llm.engine import GenerationRequest, LlamaEngine
from sentinel_mcp.llm.grammar_registry import GrammarRegistry
from sentinel_mcp.llm.output_models import RiskAssessment
from sentinel_mcp.llm.settings import LlmSettings

pytestmark = pytest.mark.timeout(120)
RISK = GrammarRegistry.load().get("risk").text


def _messages(system: str, user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


async def test_alternating_preambles_are_restored_not_evaluated_again(tiny_settings: LlmSettings):
    engine = LlamaEngine(tiny_settings)
    sys_a, sys_b = "You rate risks. " * 12, "You pick UI actions. " * 12
    try:
        first = await engine.generate(
            GenerationRequest(_messages(sys_a, "Tap 'Pay'."), max_tokens=3000, grammar=RISK)
        )
        assert first.cached_prompt_tokens == 0 and len(engine.prefix_cache) == 1
        other = await engine.generate(GenerationRequest(_messages(sys_b, "Open Mail."), max_tokens=8))
        assert other.cached_prompt_tokens < 30  # only the template's opening (bytes here) is shared with A
        again = await engine.generate(
            GenerationRequest(_messages(sys_a, "Tap 'Delete account'."), max_tokens=3000, grammar=RISK)
        )
        preamble = len(
            engine._llm.tokenize(("<|im_start|>system\n" + sys_a).encode(), add_bos=True, special=True)
        )
        assert again.cached_prompt_tokens >= preamble  # restored from the snapshot, not evaluated again
        assert engine.prefix_cache.hits == 1 and engine.status()["prefix_cache"]["snapshots"] == 2
        RiskAssessment.model_validate(json.loads(again.text))  # the restored context decodes normally
        assert again.prompt_tokens > again.cached_prompt_tokens  # the user turn was evaluated
    finally:
        engine.close()


async def test_cache_off_reuses_only_what_the_context_still_holds(tiny_settings: LlmSettings):
    engine = LlamaEngine(tiny_settings.model_copy(update={"prefix_cache_mb": 0}))
    sys_a = "You rate risks. " * 12
    try:
        await engine.generate(GenerationRequest(_messages(sys_a, "one"), max_tokens=4))
        await engine.generate(
            GenerationRequest(_messages("Something else entirely. " * 5, "two"), max_tokens=4)
        )
        g = await engine.generate(GenerationRequest(_messages(sys_a, "three"), max_tokens=4))
        assert g.cached_prompt_tokens < 30 and len(engine.prefix_cache) == 0 and engine.prefix_cache.hits == 0
        # the same preamble right after itself is still in the context: llama-cpp-python's own reuse
        g2 = await engine.generate(GenerationRequest(_messages(sys_a, "four"), max_tokens=4))
        assert g2.cached_prompt_tokens > 40
    finally:
        engine.close()


async def test_snapshots_are_bounded_by_bytes(tiny_settings: LlmSettings):
    engine = LlamaEngine(tiny_settings)
    try:
        await engine.generate(GenerationRequest(_messages("Preamble zero. " * 10, "x"), max_tokens=2))
        one = engine.prefix_cache.bytes
        assert one > 0
        engine.prefix_cache.max_party_bytes = int(one * 2.5)  # room for two snapshots of this size a party
        for i in range(1, 6):
            await engine.generate(GenerationRequest(_messages(f"Preamble {i}. " * 10, "x"), max_tokens=2))
            assert engine.prefix_cache.bytes <= engine.prefix_cache.max_party_bytes
        assert len(engine.prefix_cache) == 2  # least recently used first out
    finally:
        engine.close()
