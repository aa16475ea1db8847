"""The two grammar samplers on the tiny GGUF: llguidance token masks (default) and llama.cpp's own (fallback).

Every output of the mask path must parse, validate against its pydantic model or JSON Schema, and be
accepted by llama.cpp's grammar engine for the same GBNF file (the referee in tests/support).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import anyio
import jsonschema
import pytest

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
pytest.importorskip("llguidance", reason="llguidance is not installed")

from tests.support.gbnf_acceptor import byte_tokens, llama_cpp_accepts

from sentinel_mcp.llm import token_masks
from sentinel_mcp.llm.cortex import Cortex
from sentinel_mcp.llm.engine import GenerationRequest, LlamaEngine
from sentinel_mcp.llm.errors import GenerationCancelled
from sentinel_mcp.llm.output_models import GRAMMAR_MODELS
from sentinel_mcp.llm.schema_grammar import compile_schema
from sentinel_mcp.llm.settings import LlmSettings

pytestmark = pytest.mark.timeout(120)
USER = [{"role": "user", "content": "Produce the JSON."}]
# valid GBNF that llguidance's converter cannot take: a \u escape (it drops the leading zeros) and a
# token reference; llama.cpp's sampler must still serve them
UNSUPPORTED = {
    "unicode escape": ('root ::= "x" [\\u00e0-\\u00ff]{1,3}', "invalid regex"),
    "token reference": ('root ::= "a" <[66]> "c"', "GBNF to Lark conversion failed"),
}
SCHEMAS = [
    {
        "type": "object",
        "required": ["name", "age", "role"],
        "properties": {
            "name": {"type": "string", "maxLength": 12},
            "age": {"type": "integer", "minimum": 18, "maximum": 99},
            "role": {"enum": ["customer", "supplier"]},
            "email": {"type": ["string", "null"], "maxLength": 30},
        },
    },
    {
        "type": "object",
        "required": ["items"],
        "$defs": {
            "item": {
                "type": "object",
                "required": ["sku", "qty"],
                "properties": {
                    "sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{2}$"},
                    "qty": {"type": "integer", "minimum": 1},
                },
            }
        },
        "properties": {
            "items": {"type": "array", "items": {"$ref": "#/$defs/item"}, "minItems": 1, "maxItems": 3}
        },
    },
]


@pytest.fixture
def masks_engine(tiny_settings: LlmSettings):
    e = LlamaEngine(tiny_settings.model_copy(update={"grammar_sampler": "llguidance"}))
    yield e
    e.close()


@pytest.mark.parametrize("name", sorted(GRAMMAR_MODELS))
async def test_mask_path_output_validates_and_llama_cpp_accepts_it(masks_engine: LlamaEngine, name):
    cortex = Cortex(masks_engine.settings, engine=masks_engine)
    gbnf = cortex.grammars.get(name).text
    texts = set()
    for seed in (1, 2, 3):
        r = await cortex.generate("Produce the JSON.", grammar=name, max_tokens=4000, seed=seed)
        g = r.generation
        assert g.sampler == "llguidance" and g.fallback_reason is None
        assert g.finish_reason == "stop" and g.completion_tokens > 0
        assert GRAMMAR_MODELS[name].model_validate(json.loads(r.text)).model_dump(mode="json") == r.data
        assert llama_cpp_accepts(masks_engine._llm, gbnf, r.text, byte_tokens(masks_engine._llm)) is None, (
            r.text
        )
        texts.add(r.text)
    assert len(texts) == 3  # the seeds really sampled


@pytest.mark.parametrize("schema", SCHEMAS, ids=["bounds", "refs-and-pattern"])
async def test_mask_path_enforces_json_schemas(masks_engine: LlamaEngine, schema):
    cortex = Cortex(masks_engine.settings, engine=masks_engine)
    for seed in (1, 2, 3):
        r = await cortex.generate("Describe it.", json_schema=schema, max_tokens=600, seed=seed)
        assert r.generation.sampler == "llguidance"
        jsonschema.validate(r.data, schema)  # bounds and patterns hold by construction, not by luck
        assert set(r.data) <= set(schema["properties"])  # no invented keys, as with llama.cpp's converter


def test_mask_path_agrees_with_llama_cpp_on_hand_written_outputs(masks_engine: LlamaEngine):
    """Valid texts the GBNF allows are allowed by the converted grammar too, byte for byte; broken ones are
    not."""
    anyio.run(masks_engine.load)
    compiler = masks_engine.grammar_cache.masks
    assert compiler is not None
    samples = {
        "risk": [
            '{"risk": "high", "reasons": ["sends money", "caf\\u00e9 \\"quoted\\""]}',
            '{"risk":"low","reasons":["x"]}',
        ],
        "action": [
            '{"action": "click", "snapshot_id": "s-0123456789", "element_id": 12, "reasoning": "log in"}',
            '{\n "action": "type", "snapshot_id": "s-abcdef0123", "element_id": "e-1a2b3c4d.2", '
            '"text": "hello", "reasoning": "r"}',
            '{"action": "done", "snapshot_id": null, "text": "Alice: See you at 7?", "reasoning": "read"}',
        ],
        "tool_call": [
            '{"tool": "device__click", "arguments": {"a": {"b": [1, -2.5e3, "x", null]}, "c": true}}'
        ],
        "verifier": ['{"warnings": [], "missing_items": ["README"], "quality_score": 0.75}'],
    }
    broken = {
        "risk": '{"risk": "extreme", "reasons": ["x"]}',
        "verifier": '{"warnings": [], "missing_items": [], "quality_score": 1.5}',
        "action": '{"action": "click", "element_id": 12, "reasoning": "no snapshot"}',
    }
    bt = byte_tokens(masks_engine._llm)
    for name, texts in samples.items():
        gbnf = Cortex(masks_engine.settings, engine=masks_engine).grammars.get(name).text
        for text in texts:
            assert llama_cpp_accepts(masks_engine._llm, gbnf, text, bt) is None
            m = compiler.for_gbnf("tester", gbnf)
            assert m.consume_tokens([bt[b] for b in text.encode()]) and m.is_accepting(), (name, text)
    for name, text in broken.items():
        gbnf = Cortex(masks_engine.settings, engine=masks_engine).grammars.get(name).text
        assert llama_cpp_accepts(masks_engine._llm, gbnf, text, bt) is not None
        m = compiler.for_gbnf("tester", gbnf)
        assert not (m.consume_tokens([bt[b] for b in text.encode()]) and m.is_accepting()), (name, text)


async def test_setting_selects_llama_cpps_sampler(tiny_settings: LlmSettings):
    engine = LlamaEngine(tiny_settings.model_copy(update={"grammar_sampler": "llama_cpp"}))
    try:
        cortex = Cortex(engine.settings, engine=engine)
        r = await cortex.generate("Rate it.", grammar="risk", max_tokens=3000, seed=4)
        assert r.generation.sampler == "llama_cpp" and r.generation.fallback_reason is None
        GRAMMAR_MODELS["risk"].model_validate(r.data)
        assert engine.grammar_cache.masks is None  # llguidance never loaded
        assert engine.status()["grammar_sampler"] == "llama_cpp (configured)"
        assert engine.grammar_sampler_for(cortex.grammars.get("risk").text) == ("llama_cpp", None)
    finally:
        engine.close()


@pytest.mark.parametrize("case", sorted(UNSUPPORTED))
async def test_unsupported_grammar_falls_back_with_a_logged_reason(masks_engine: LlamaEngine, caplog, case):
    gbnf, reason = UNSUPPORTED[case]
    caplog.set_level(logging.WARNING, logger="sentinel_mcp.llm.engine")
    g = await masks_engine.generate(
        GenerationRequest(USER, max_tokens=20, grammar=gbnf, grammar_label="odd.gbnf")
    )
    assert g.sampler == "llama_cpp" and reason in g.fallback_reason
    assert llama_cpp_accepts(masks_engine._llm, gbnf, g.text) is None
    logged = [r.getMessage() for r in caplog.records if "odd.gbnf" in r.getMessage()]
    assert len(logged) == 1 and reason in logged[0] and "llama.cpp's grammar sampler" in logged[0]
    # the second call falls back again (same reason) without logging it again
    g2 = await masks_engine.generate(
        GenerationRequest(USER, max_tokens=20, grammar=gbnf, grammar_label="odd.gbnf")
    )
    assert g2.sampler == "llama_cpp" and g2.fallback_reason == g.fallback_reason
    assert len([r for r in caplog.records if "odd.gbnf" in r.getMessage()]) == 1
    # shipped grammars on the same engine still take the fast path
    risk = Cortex(masks_engine.settings, engine=masks_engine).grammars.get("risk").text
    assert masks_engine.grammar_sampler_for(risk) == ("llguidance", None)


async def test_missing_llguidance_falls_back_for_every_grammar(
    tiny_settings: LlmSettings, monkeypatch, caplog
):
    def absent():
        raise token_masks.UnsupportedGrammar("llguidance is not installed (No module named 'llguidance')")

    monkeypatch.setattr(token_masks, "_llguidance", absent)
    caplog.set_level(logging.WARNING, logger="sentinel_mcp.llm.engine")
    engine = LlamaEngine(tiny_settings)
    try:
        cortex = Cortex(engine.settings, engine=engine)
        # seed 2 padded whitespace past n_ctx once llama.cpp's sampler ran as a mask (its random stream moved)
        r = await cortex.generate("x", grammar="critic", max_tokens=3000, seed=0)
        assert r.generation.sampler == "llama_cpp" and "not installed" in r.generation.fallback_reason
        GRAMMAR_MODELS["critic"].model_validate(r.data)
        assert "llguidance unavailable" in engine.status()["grammar_sampler"]
        assert any("not installed" in rec.getMessage() for rec in caplog.records)
    finally:
        engine.close()


@pytest.mark.parametrize("sampler", ["llguidance", "llama_cpp"])
async def test_cancellation_stops_either_sampler_at_the_next_token(
    tiny_settings, grammars_with_endless, sampler
):
    engine = LlamaEngine(tiny_settings.model_copy(update={"grammar_sampler": sampler}))
    endless = grammars_with_endless.get("endless").text
    try:
        await engine.load()
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(engine.generate, GenerationRequest(USER, max_tokens=3000, grammar=endless))
                while not engine.tokens_in_flight:
                    await anyio.sleep(0.002)
                scope.cancel()
        assert scope.cancelled_caught
        record = engine.history[-1]
        assert record.cancelled and 0 < record.completion_tokens < 3000
        assert engine.turns.holder is None  # the model is free when the cancelled call returns
        import threading

        stop = threading.Event()
        stop.set()
        with pytest.raises(GenerationCancelled):  # a set flag stops a blocking caller before any token
            engine.generate_blocking(GenerationRequest(USER, max_tokens=50, grammar=endless), stop)
        g = await engine.generate(GenerationRequest(USER, max_tokens=5, grammar=endless))
        assert g.sampler == sampler and g.completion_tokens == 5 and g.finish_reason == "length"
    finally:
        engine.close()


async def test_old_and_new_sampler_give_the_same_shapes_for_a_schema(tiny_settings: LlmSettings):
    """Both samplers run on the same schema: both outputs validate (identical validity, different samples)."""
    schema = SCHEMAS[0]
    for sampler in ("llguidance", "llama_cpp"):
        engine = LlamaEngine(tiny_settings.model_copy(update={"grammar_sampler": sampler}))
        try:
            g = await engine.generate(
                GenerationRequest(
                    USER,
                    max_tokens=600,
                    grammar=compile_schema(schema),
                    grammar_label="json_schema",
                    json_schema=schema,
                    seed=5,
                )
            )
            assert g.sampler == sampler and g.finish_reason == "stop"
            data = json.loads(g.text, strict=False)
            if sampler == "llguidance":
                jsonschema.validate(data, schema)
            else:  # llama.cpp's converter cannot bound numbers: those are checked after generation
                assert set(data) <= set(schema["properties"]) and set(schema["required"]) <= set(data)
        finally:
            engine.close()


def test_context_window_is_capped_by_the_models_trained_context(tiny_chat_model: Path, tmp_path: Path):
    from tests.support.tiny_gguf import write_tiny_gguf

    small = write_tiny_gguf(tmp_path / "ctx1024.gguf", n_ctx=1024)
    for model, configured, expected in (
        (tiny_chat_model, None, 4096),
        (small, None, 1024),
        (small, 512, 512),
        (tiny_chat_model, 2048, 2048),
    ):
        settings = LlmSettings(model=str(model), n_threads=1, **({"n_ctx": configured} if configured else {}))
        engine = LlamaEngine(settings)
        try:
            anyio.run(engine.load)
            assert engine.n_ctx == expected and engine.status()["n_ctx"] == expected
        finally:
            engine.close()
    assert LlmSettings().n_ctx == 16_384


def _nested_arrays(depth: int) -> dict:
    node: dict = {"type": "string", "maxLength": 3}
    for _ in range(depth):
        node = {"type": "array", "items": node, "maxItems": 2}
    return {"type": "object", "required": ["a"], "properties": {"a": node}}


HOSTILE_SCHEMAS = {
    # nested repetition: llama.cpp's converter expands it into thousands of nested groups
    "regex blow-up": {
        "type": "object",
        "required": ["a"],
        "properties": {"a": {"type": "string", "pattern": "^([a-z]{1,50}){1,1000}$"}},
    },
    "long maxLength": {
        "type": "object",
        "required": ["a"],
        "properties": {"a": {"type": "string", "maxLength": 1000}},
    },
}


@pytest.mark.parametrize("name", sorted(HOSTILE_SCHEMAS))
async def test_hostile_schemas_are_refused_clearly_before_the_model(masks_engine: LlamaEngine, name):
    from sentinel_mcp.llm.errors import SchemaError

    cortex = Cortex(masks_engine.settings, engine=masks_engine)
    # the pattern is refused by its repetitions before RE2 compiles it, the long string by the grammar
    refused = "spells out 50002 repetitions" if name == "regex blow-up" else "nested deeper than 300 levels"
    with pytest.raises(SchemaError, match=refused):
        await cortex.generate("x", json_schema=HOSTILE_SCHEMAS[name], max_tokens=50)
    assert not masks_engine.history


@pytest.mark.parametrize(
    "schema",
    [
        _nested_arrays(40),
        {
            "type": "object",
            "required": ["a"],
            "properties": {"a": {"enum": [f"value-{i}" for i in range(3000)]}},
        },
    ],
    ids=["40 nested arrays", "3000-value enum"],
)
async def test_large_but_legal_schemas_stay_on_the_fast_path(masks_engine: LlamaEngine, schema):
    cortex = Cortex(masks_engine.settings, engine=masks_engine)
    r = await cortex.generate("x", json_schema=schema, max_tokens=2000, seed=1)
    assert r.generation.sampler == "llguidance"
    jsonschema.validate(r.data, schema)


def test_gbnf_nesting_is_bounded_with_a_position():
    from sentinel_mcp.llm.gbnf_syntax import GbnfSyntaxError, check_gbnf

    check_gbnf("root ::= " + "(" * 300 + '"a"' + ")" * 300)
    with pytest.raises(GbnfSyntaxError, match=r"line 1, column 310: groups nested deeper than 300 levels"):
        check_gbnf("root ::= " + "(" * 301 + '"a"' + ")" * 301)


@pytest.mark.parametrize(
    "schema, message",
    [
        ({"type": "object", "properties": {"s": {"type": "string", "minLength": 20_000_000}}},
         "at most 4096"),
        ({"type": "array", "items": {"type": "integer"}, "minItems": 10**7}, "at most 4096"),
        ({"type": "object", "minProperties": 1e9}, "at most 4096"),
        ({"type": "object", "properties": {f"p{i}": {"type": "string", "minLength": 4000} for i in range(5)}},
         "add up to 20000"),
        ({"type": "object", "$defs": {"big": {"type": "string", "minLength": 9999}},
          "properties": {"a": {"$ref": "#/$defs/big"}}}, "at most 4096"),
    ],
    ids=["minLength 2e7", "minItems 1e7", "minProperties 1e9", "five of 4000", "in $defs"],
)
def test_length_and_count_bounds_are_capped_before_any_grammar_is_built(schema, message):
    """A 60-byte schema with "minLength": 20000000 became a 100 MB grammar, built on the event loop (20 s,
    800 MB): each bound and their sum are capped, and the schema is refused before the converter runs."""
    from sentinel_mcp.llm.errors import SchemaError
    from sentinel_mcp.llm.schema_grammar import compile_schema

    with pytest.raises(SchemaError, match=message):
        compile_schema(schema)


def _alternatives(n: int) -> str:
    return "^(" + "|".join(f"x{i}{{1,999}}" for i in range(n)) + ")$"


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "pattern": _alternatives(60)},
        {"type": "string", "pattern": "^" + "a{1,999}" * 20 + "$"},
        {"type": "string", "pattern": "^(?:(?:[a-z]{1,20}){1,20}){1,20}$"},
        {"type": "string", "pattern": "^(?>a{1,999}){9}b{1,999}+$"},
        {"type": "string", "pattern": "^(?=x)a{5000,}$"},
        {"type": "object", "properties": {f"p{i}": {"type": "string", "pattern": f"^[a-z]{{{i},3999}}$"}
                                          for i in range(5)}},
        {"type": "object", "patternProperties": {_alternatives(60): {"type": "string"}}},
        {"type": "string", "pattern": "[a-"},
    ],
    ids=["alternatives", "sequence", "nested", "atomic+possessive", "open upper bound", "five of 3999",
         "patternProperties", "unreadable"],
)
def test_a_pattern_is_measured_by_its_repetitions_before_anything_compiles_it(schema):
    """A 686-byte pattern of 60 alternatives, each ``{1,999}``, took RE2 17 s to compile (its time grows with
    the square of the repetitions spelled out) on the gateway's event loop: through the real gateway every
    other call and connection stood still that long, before any model was asked. A pattern's repetitions
    now count as the length bounds do, each pattern and the whole schema capped, before RE2 or the grammar
    converter sees it."""
    import time

    from sentinel_mcp.llm.errors import SchemaError
    from sentinel_mcp.llm.schema_grammar import compile_schema

    started = time.perf_counter()
    with pytest.raises(SchemaError, match="repetitions|add up to|cannot be read"):
        compile_schema(schema)
    assert time.perf_counter() - started < 0.5


def test_a_pattern_within_the_bounds_still_constrains():
    from sentinel_mcp.llm.schema_grammar import compile_schema

    for pattern in ("^[A-Za-z0-9][A-Za-z0-9 ,.!?'()-]{0,47}$", "^(ab){3}c*$", "^(x|y{2,5})+$"):
        assert compile_schema({"type": "string", "pattern": pattern}).startswith("root ::=")


def test_a_property_named_like_a_bound_is_not_a_bound():
    from sentinel_mcp.llm.schema_grammar import compile_schema

    schema = {"type": "object", "properties": {"minLength": {"type": "integer"}}, "required": ["minLength"]}
    assert "minLength" in compile_schema(schema)


async def test_llguidance_failing_mid_generation_logs_a_bounded_line(masks_engine: LlamaEngine, caplog):
    """llguidance's error quotes its whole state and the caller's schema: each such call logged the 30 KB
    schema below (a caller could fill the operator's log); the line now keeps the start of the reason."""
    from sentinel_mcp.llm.errors import LlmError

    caplog.set_level(logging.WARNING)
    filler = "caller text " * 2500
    schema = {
        "type": "object",
        "description": filler,
        "properties": {"x": {"$ref": "#/definitions/a"}},
        "required": ["x"],
        "definitions": {"a": {"allOf": [{"$ref": "#/definitions/a"}]}},  # llguidance gives up mid-way
    }
    cortex = Cortex(masks_engine.settings, engine=masks_engine)
    for _ in range(2):
        with pytest.raises(LlmError):
            await cortex.generate("x", json_schema=schema, max_tokens=50)
    fallbacks = [r.getMessage() for r in caplog.records if "llguidance failed" in r.getMessage()]
    assert fallbacks  # the case this is about happened
    longest = max(len(r.getMessage()) for r in caplog.records)
    assert longest <= 1_000, longest
