"""A caller's json_schema runs only on llguidance's token masks, whose cost per token is bounded; never on
llama.cpp's grammar sampler, whose is not.

What broke (red team "rt-llm"): a 1.5 KB schema, a string whose pattern is ``(a?)`` 300 times then ``a`` 300
times (the textbook regular expression whose automaton blows up), made llguidance give up after a token
("too many expressions constructed", its bound working) and the engine then generated again with llama.cpp's
grammar sampler. That sampler's one step over the vocabulary is a single C call no time limit interrupts: on
the 270M Gemma (262,144 tokens) with ``max_generation_seconds`` 30, N=100 took 7 s a token and N=300 had not
finished one token after 400 s, holding the model (every other party waited) and a core. The same schema with
``"format": "x"`` (a format llguidance does not know) went to llama.cpp's sampler from the start. Now a
caller's schema llguidance cannot take as JSON Schema is tried as the GBNF Sentinel compiled from it (the
keywords llguidance lacks are checked after generation anyway), and one it cannot take or gives up on is
refused; named grammars (the operator's files) keep the fallback.

Real parts: the engine on the tiny random GGUF (its small vocabulary makes the old path slow, not endless),
llguidance and llama.cpp; the llama.cpp sampler's constructions are counted by wrapping the real class.
"""

from __future__ import annotations

import pytest

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
pytest.importorskip("llguidance", reason="llguidance is not installed")

from sentinel_mcp.llm import decoding_paths as engine_module  # where the engine builds its samplers
from sentinel_mcp.llm.cortex import Cortex
from sentinel_mcp.llm.engine import LlamaEngine
from sentinel_mcp.llm.errors import GrammarError, OutputInvalid, SchemaError

pytestmark = pytest.mark.timeout(120)
BLOWUP = "^" + "(a?)" * 300 + "a" * 300 + "$"
HOSTILE = {
    "gives-up-mid-way": {"type": "string", "pattern": BLOWUP},
    "unknown-format": {"type": "string", "pattern": BLOWUP, "format": "x"},
    "unique-items": {"type": "array", "items": {"type": "string", "pattern": BLOWUP}, "uniqueItems": True},
}


@pytest.fixture
def llama_samplers(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The labels llama.cpp's grammar sampler was built for (the real class, counted)."""
    made: list[str] = []
    real = engine_module.ProcessGrammarMatcher

    def counted(child, gbnf, label, *rest):  # noqa: ANN001, ANN002, ANN202
        made.append(label)
        return real(child, gbnf, label, *rest)

    monkeypatch.setattr(engine_module, "ProcessGrammarMatcher", counted)
    return made


@pytest.mark.parametrize("case", sorted(HOSTILE))
async def test_a_schema_llguidance_cannot_bound_is_refused_not_run_on_llama_cpp(
    engine: LlamaEngine, llama_samplers: list[str], case: str
) -> None:
    cortex = Cortex(engine.settings, engine=engine)
    try:
        r = await cortex.generate("Write a's.", json_schema=HOSTILE[case], max_tokens=4, party="mallory")
    except (SchemaError, GrammarError) as exc:  # llguidance gave up on it: refused
        assert "llama.cpp's grammar sampler" in str(exc), exc
    except OutputInvalid:  # llguidance bounded it (the grammar compiled from it): cut at max_tokens
        assert case != "gives-up-mid-way"
    else:
        assert r.generation.sampler == "llguidance", r.generation
    assert llama_samplers == []
    # the model serves the next call at once
    r = await cortex.generate("Rate it.", grammar="risk", max_tokens=3000, party="bob")
    assert r.data is not None


@pytest.mark.parametrize("schema", [
    {"type": "array", "items": {"type": "integer"}, "uniqueItems": True, "maxItems": 3},
    {"type": "string", "format": "no-such-format", "maxLength": 8},
])
async def test_a_sound_schema_llguidance_lacks_a_keyword_of_still_runs_on_llguidance(
    engine: LlamaEngine, llama_samplers: list[str], schema: dict
) -> None:
    cortex = Cortex(engine.settings, engine=engine)
    r = await cortex.generate("Answer.", json_schema=schema, max_tokens=200, seed=3)
    assert r.generation.sampler == "llguidance" and llama_samplers == []
    assert r.data is not None or r.data == []
