"""The engine's compiled grammars are kept per party, not shared by content (red team 'cortex grammar cache').

Above the engine, a caller's compiled schemas were already per party (``schema_cache``). Below it the engine
kept llama.cpp's checked grammars (64, first in first out) and llguidance's compiled matchers and refusals
(64 each) in caches shared by grammar text: one principal sending 64 distinct grammars evicted every other
principal's, whose recompile then ran inside the victim's own turn of the model; and a grammar another party
had compiled was served from the cache, faster, so a caller could tell by timing which grammar or schema
someone else had sent. Here the compiles are counted at the libraries' entry points (llama.cpp's grammar
object, llguidance's matcher), on the tiny GGUF model, with real generations.
"""

from __future__ import annotations

import contextlib
from collections import Counter

import pytest

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
pytest.importorskip("llguidance", reason="llguidance is not installed")

from sentinel_mcp.llm import token_masks
from sentinel_mcp.llm.cortex import Cortex
from sentinel_mcp.llm.engine import GenerationRequest, LlamaEngine
from sentinel_mcp.llm.errors import GrammarError, OutputInvalid
from sentinel_mcp.llm.party_lru import PartyLru
from sentinel_mcp.llm.settings import LlmSettings

pytestmark = pytest.mark.timeout(300)
USER = [{"role": "user", "content": "Say it."}]
SCHEMA = {
    "type": "object",
    "required": ["name"],
    "properties": {"name": {"type": "string", "maxLength": 6}, "n": {"type": "integer", "maximum": 9}},
}
# valid GBNF llguidance refuses (a \u escape): llama.cpp's sampler serves it
REFUSED_BY_LLGUIDANCE = 'root ::= "x" [\\u00e0-\\u00ff]{1,3}'


def grammar(n: int) -> str:
    """A distinct small grammar per n."""
    return f'root ::= "v{n}" [a-c]\n'


class Compiles:
    """Counts real compiles at the libraries' entry points, per grammar text."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from llama_cpp import LlamaGrammar

        self.llama: Counter[str] = Counter()
        self.masks: Counter[str] = Counter()  # llguidance grammars compiled into a matcher
        self.lark: Counter[str] = Counter()  # GBNF texts handed to llguidance's converter (refused ones too)
        self.llama_objects: list[object] = []
        from_string = LlamaGrammar.from_string
        compile_matcher = token_masks.MaskCompiler._compile
        to_lark = token_masks.MaskCompiler._lark_grammar

        def counted_from_string(text: str, verbose: bool = True) -> object:
            self.llama[text] += 1
            made = from_string(text, verbose=verbose)
            self.llama_objects.append(made)
            return made

        def counted_compile(compiler: object, ll_grammar: str) -> object:
            self.masks[ll_grammar] += 1
            return compile_matcher(compiler, ll_grammar)

        def counted_lark(text: str) -> str:
            self.lark[text] += 1
            return to_lark(text)

        monkeypatch.setattr(LlamaGrammar, "from_string", counted_from_string)
        monkeypatch.setattr(token_masks.MaskCompiler, "_compile", counted_compile)
        monkeypatch.setattr(token_masks.MaskCompiler, "_lark_grammar", staticmethod(counted_lark))

    @property
    def total_masks(self) -> int:
        return sum(self.masks.values())


def run(engine: LlamaEngine, party: str, gbnf: str, **kw) -> None:  # noqa: ANN003
    g = engine.generate_blocking(GenerationRequest(USER, max_tokens=1, grammar=gbnf, party=party, **kw))
    assert g.completion_tokens == 1


@pytest.fixture
def settings(tiny_settings: LlmSettings) -> LlmSettings:
    return tiny_settings.model_copy(update={"grammar_sampler": "llguidance"})


@pytest.fixture
def engine(settings: LlmSettings):
    e = LlamaEngine(settings)
    yield e
    e.close()


def test_a_grammar_one_party_compiled_is_compiled_again_for_another(
    engine: LlamaEngine, monkeypatch: pytest.MonkeyPatch
):
    spy = Compiles(monkeypatch)
    g = grammar(1)
    run(engine, "alice", g)
    assert spy.llama[g] == 1 and spy.total_masks == 1
    run(engine, "alice", g)  # her own repeat is a hit: nothing compiled again
    assert spy.llama[g] == 1 and spy.total_masks == 1
    run(engine, "bob", g)  # bob's first use compiles his own: no fast answer tells him alice sent it
    assert spy.llama[g] == 2 and spy.total_masks == 2
    alices, bobs = spy.llama_objects
    assert alices is not bobs
    run(engine, "bob", g)
    assert spy.llama[g] == 2 and spy.total_masks == 2


async def test_a_json_schema_one_party_compiled_is_compiled_again_for_another(
    settings: LlmSettings, monkeypatch: pytest.MonkeyPatch
):
    spy = Compiles(monkeypatch)
    engine = LlamaEngine(settings)
    cortex = Cortex(settings, engine=engine)
    try:
        for party in ("alice", "alice", "bob", "bob"):
            with contextlib.suppress(OutputInvalid):  # one token cannot complete the JSON: not the point
                await cortex.generate("Name it.", json_schema=SCHEMA, max_tokens=1, party=party)
        # one llguidance schema matcher and one llama.cpp grammar for each party, none shared
        assert spy.total_masks == 2 and sum(spy.llama.values()) == 2, (spy.masks, spy.llama)
    finally:
        engine.close()


def test_a_flood_of_one_partys_grammars_does_not_evict_anothers(
    engine: LlamaEngine, monkeypatch: pytest.MonkeyPatch
):
    spy = Compiles(monkeypatch)
    bobs = grammar(10_000)
    run(engine, "bob", bobs)
    for n in range(70):  # more distinct grammars than the old shared caches held (64)
        run(engine, "alice", grammar(n))
    masks_before = spy.total_masks
    run(engine, "bob", bobs)  # still his: not recompiled (inside his own turn) because of alice's flood
    assert spy.llama[bobs] == 1 and spy.total_masks == masks_before
    # alice's flood only ever evicted her own oldest
    run(engine, "alice", grammar(0))
    assert spy.llama[grammar(0)] == 2 and spy.total_masks == masks_before + 1


def test_a_refusal_llguidance_gave_one_party_is_not_replayed_to_another(
    engine: LlamaEngine, monkeypatch: pytest.MonkeyPatch
):
    spy = Compiles(monkeypatch)
    run(engine, "alice", REFUSED_BY_LLGUIDANCE)
    run(engine, "alice", REFUSED_BY_LLGUIDANCE)  # her own refusal is remembered: not converted again
    assert spy.lark[REFUSED_BY_LLGUIDANCE] == 1
    run(engine, "bob", REFUSED_BY_LLGUIDANCE)  # bob's is found out for him: no fast refusal from alice's
    assert spy.lark[REFUSED_BY_LLGUIDANCE] == 2
    assert spy.llama[REFUSED_BY_LLGUIDANCE] == 2


def test_a_partys_grammars_are_bounded_and_its_flood_evicts_only_its_own(
    settings: LlmSettings, monkeypatch: pytest.MonkeyPatch
):
    spy = Compiles(monkeypatch)
    engine = LlamaEngine(settings, grammars_per_party=3, grammar_parties=8)
    try:
        run(engine, "bob", grammar(100))
        for n in range(10):
            run(engine, "alice", grammar(n))
        cache = engine.grammar_cache
        assert cache.held("alice") == 3 and cache.held("bob") == 1
        assert cache.matchers_held("alice") == 3 and cache.matchers_held("bob") == 1
        run(engine, "alice", grammar(9))  # her newest are kept (least recently used out)
        assert spy.llama[grammar(9)] == 1
        run(engine, "alice", grammar(0))  # her oldest went
        assert spy.llama[grammar(0)] == 2
        run(engine, "bob", grammar(100))
        assert spy.llama[grammar(100)] == 1
    finally:
        engine.close()


def test_parties_are_bounded_least_recently_used_out(settings: LlmSettings, monkeypatch: pytest.MonkeyPatch):
    spy = Compiles(monkeypatch)
    engine = LlamaEngine(settings, grammars_per_party=2, grammar_parties=3)
    try:
        g = grammar(7)
        for party in ("p0", "p1", "p2"):
            run(engine, party, g)
        run(engine, "p0", g)  # p0 used again: p1 is now the least recently used party
        run(engine, "p3", g)  # a fourth party: p1's grammars are dropped, no one else's
        cache = engine.grammar_cache
        assert [cache.held(p) for p in ("p0", "p1", "p2", "p3")] == [1, 0, 1, 1]
        assert [cache.matchers_held(p) for p in ("p0", "p1", "p2", "p3")] == [1, 0, 1, 1]
        assert spy.llama[g] == 4
    finally:
        engine.close()


def test_a_grammar_llama_cpp_rejects_is_refused_and_not_remembered(engine: LlamaEngine):
    bad = "root ::= undefined_rule\n"
    for _ in range(2):
        with pytest.raises(GrammarError, match="rejected"):
            run(engine, "alice", bad)
    assert engine.grammar_cache.held("alice") == 0


def test_party_lru_bounds():
    lru: PartyLru[int] = PartyLru(per_party=2, parties=2)
    lru.put("a", "k1", 1)
    lru.put("a", "k2", 2)
    lru.put("a", "k3", 3)  # a's oldest out
    assert lru.get("a", "k1") is None and lru.get("a", "k2") == 2 and lru.get("a", "k3") == 3
    lru.put("b", "k1", 10)
    assert lru.get("b", "k1") == 10 and lru.get("a", "k1") is None  # keys are per party
    lru.get("a", "k2")  # a used last: b is the least recently used party
    lru.put("c", "k1", 20)
    assert lru.held("b") == 0 and lru.held("a") == 2 and lru.held("c") == 1
    assert len(lru) == 3
    lru.clear()
    assert len(lru) == 0
