"""No caller holds the model for a whole long generation: each turn ends at ``max_generation_seconds``.

The bound is driven from the test (a tiny one, a long max_tokens); what is asserted is the result and the
engine's record, never how long anything took. Free text past its bound comes back as what was generated,
marked ``time_limit``; grammar-constrained output past it is refused (an incomplete derivation is never
handed on as JSON); a prompt whose evaluation passes the bound is stopped between batches.
"""

from __future__ import annotations

import pytest

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")

from sentinel_mcp.config import ConfigError
from sentinel_mcp.llm.cortex import Cortex, _parse_and_validate
from sentinel_mcp.llm.engine import Generation, GenerationRequest, LlamaEngine
from sentinel_mcp.llm.errors import GenerationTimedOut, GrammarError, OutputInvalid
from sentinel_mcp.llm.settings import LlmSettings

pytestmark = pytest.mark.timeout(90)
USER = [{"role": "user", "content": "Tap the login button."}]
TINY = 1e-6  # passed by the time the first token is sampled, whatever the machine


def _engine(settings: LlmSettings, **update) -> LlamaEngine:
    return LlamaEngine(settings.model_copy(update=update))


async def _free_again(engine: LlamaEngine, request: GenerationRequest) -> Generation:
    """The model's turn was handed on: a call under a real bound runs to its own end."""
    assert engine.turns.holder is None and engine.tokens_in_flight is None
    engine.settings = engine.settings.model_copy(update={"max_generation_seconds": 60.0})
    return await engine.generate(request)


async def test_free_text_past_its_bound_is_cut_and_marked(tiny_settings: LlmSettings):
    engine = _engine(tiny_settings, max_generation_seconds=TINY)
    try:
        g = await engine.generate(GenerationRequest(USER, max_tokens=4000))
        assert g.finish_reason == "time_limit" and g.completion_tokens < 4000
        record = engine.history[-1]
        assert not record.cancelled and record.completion_tokens < 4000
        again = await _free_again(engine, GenerationRequest(USER, max_tokens=3, seed=1))
        assert again.finish_reason in ("stop", "length")
    finally:
        engine.close()


@pytest.mark.parametrize("sampler", ["llguidance", "llama_cpp"])
async def test_grammar_output_past_its_bound_is_refused(tiny_settings, grammars_with_endless, sampler):
    engine = _engine(tiny_settings, max_generation_seconds=TINY, grammar_sampler=sampler)
    cortex = Cortex(engine.settings, engine=engine, grammars=grammars_with_endless)
    endless = grammars_with_endless.get("endless").text
    try:
        with pytest.raises(GenerationTimedOut, match=r"max_generation_seconds") as err:
            await cortex.generate("Produce the JSON.", grammar="endless", max_tokens=4000)
        assert "incomplete" in str(err.value)
        with pytest.raises(GenerationTimedOut):  # in-process callers of the engine (the swarm) alike
            await engine.generate(GenerationRequest(USER, max_tokens=4000, grammar=endless))
        assert [r.cancelled for r in engine.history] == [False, False]
        assert all(r.completion_tokens < 4000 for r in engine.history)
        again = await _free_again(engine, GenerationRequest(USER, max_tokens=5, grammar=endless))
        assert again.sampler == sampler and again.finish_reason == "length" and again.completion_tokens == 5
    finally:
        engine.close()


@pytest.mark.parametrize("sampler", ["llguidance", "llama_cpp"])
async def test_a_long_prompt_is_stopped_between_its_batches(tiny_settings, sampler):
    # batches of 8 tokens: a prompt of a few hundred is evaluated in dozens of them
    engine = _engine(tiny_settings, max_generation_seconds=TINY, n_batch=8, grammar_sampler=sampler)
    long = [{"role": "user", "content": "Tap the login button. " * 20}]
    try:
        with pytest.raises(GenerationTimedOut, match=r"prompt") as err:
            await engine.generate(GenerationRequest(long, max_tokens=4000))
        done, total = (int(n) for n in str(err.value).split("after ")[1].split(" prompt")[0].split(" of "))
        assert 0 < done < total and total > 100
        assert engine.history[-1].completion_tokens == 0
        again = await _free_again(engine, GenerationRequest(long, max_tokens=3, seed=1))
        assert again.prompt_tokens == total
    finally:
        engine.close()


@pytest.mark.parametrize("text", ["7", '{"risk": "low", "reasons": []}', "[]"])
def test_cut_output_is_never_json_even_when_it_parses(text: str):
    gen = Generation(text, 10, 3, "time_limit", "m", "plain", 0.1, 0.01)
    with pytest.raises(OutputInvalid, match="time limit"):
        _parse_and_validate(gen, None, {})


@pytest.mark.parametrize("value", [0, -1, 1e12, float("inf"), float("nan")])
def test_the_bound_is_itself_bounded(value):
    with pytest.raises(ConfigError, match="max_generation_seconds"):
        LlmSettings.from_section({"max_generation_seconds": value})
    assert LlmSettings().max_generation_seconds <= 600  # a default no turn exceeds for minutes


async def test_an_unknown_grammar_name_is_shown_bounded_and_marked(tiny_settings, grammars_with_endless):
    engine = LlamaEngine(tiny_settings)
    cortex = Cortex(engine.settings, engine=engine, grammars=grammars_with_endless)
    name = "risk\u202e\x1b[2J" + "x" * 100_000
    try:
        with pytest.raises(GrammarError) as err:
            await cortex.generate("Produce the JSON.", grammar=name)
        message = str(err.value)
        assert len(message) < 1000 and "⟨U+202E⟩" in message and "\u202e" not in message
        assert "\x1b" not in message and "more characters not shown" in message
        assert "known grammars:" in message and "risk" in message
    finally:
        engine.close()
