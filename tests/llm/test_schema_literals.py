"""A schema's values that become grammar literals (``enum`` and ``const`` values, property names) never write
grammar text. llama-cpp-python's converter escapes a double quote in them but not the backslash JSON puts
before it, so ``x" | [a-z]* #`` closed the literal and the rest became grammar: ``root ::= "\\"x\\\\" |
[a-z]* #...`` (the comment ate the converter's own closing quote), and llama.cpp compiled it. Only the
output check stood between that grammar and the caller. Such values are refused with where they are; every
other character still works."""

from __future__ import annotations

from pathlib import Path

import pytest

from sentinel_mcp.llm.cortex import Cortex
from sentinel_mcp.llm.engine import LlamaEngine
from sentinel_mcp.llm.errors import SchemaError
from sentinel_mcp.llm.schema_grammar import compile_schema
from sentinel_mcp.llm.settings import LlmSettings

INJECTIONS = ['x" | [a-z]* #', 'x" | ([a]?)* #', 'a"b', 'back\\slash', 'x\\" | [^\\x00]* #', '"', "\\"]


def _schemas(text: str) -> list[dict]:
    return [
        {"enum": ["ok", text]},
        {"const": text},
        {"const": {text: 1}},  # a key inside a constant object
        {"const": ["a", {"b": [text]}]},
        {"type": "object", "properties": {text: {"type": "integer"}}, "required": [text]},
        {"type": "object", "properties": {"a": {"type": "object", "properties": {text: {"const": 1}}}}},
        {"$defs": {"d": {"enum": [text]}}, "type": "array", "items": {"$ref": "#/$defs/d"}},
    ]


@pytest.mark.parametrize("text", INJECTIONS)
def test_a_literal_that_would_write_grammar_text_is_refused(text: str) -> None:
    for schema in _schemas(text):
        with pytest.raises(SchemaError, match="double quote or backslash"):
            compile_schema(schema)


def test_every_other_character_is_a_literal() -> None:
    others = ["a|b", "(x)*", "#", "[a-z]", "::= root", "line\nbreak", "tab\t", "\u00e9\u4e2d", "'", "\x00"]
    for text in others:
        for schema in _schemas(text):
            gbnf = compile_schema(schema)
            assert "::=" in gbnf


async def test_the_cortex_refuses_it_before_the_model(tiny_chat_model: Path) -> None:
    settings = LlmSettings(model=str(tiny_chat_model), n_ctx=2048, n_threads=1, seed=7,
                           grammar_sampler="llama_cpp")
    engine = LlamaEngine(settings)
    try:
        cortex = Cortex(settings, engine=engine)
        with pytest.raises(SchemaError, match="double quote or backslash"):
            await cortex.generate("hi", json_schema={"enum": ['x" | [a-z]* #']}, max_tokens=8)
        assert not engine.history  # nothing ran on the model
        r = await cortex.generate("hi", json_schema={"enum": ["a|b", "#"]}, max_tokens=8)
        assert r.data in ("a|b", "#")
    finally:
        engine.close()


# astral characters (outside the BMP): JSON text writes each as a surrogate pair, ``\ud83d\ude00``, and the
# converter copied that into the grammar, where ``\uXXXX`` is one code point: the grammar asked for two
# surrogate code points, which no valid UTF-8 spells (the byte-level model wrote CESU-8 bytes, and the output
# never matched the schema)
ASTRAL = ["\U0001f600", "a\U0001f600b", "\U0001f1eb\U0001f1f7", "\U00010348", "\U0010fffd"]


@pytest.mark.parametrize("sampler", ["llama_cpp", "llguidance"])
async def test_an_astral_character_in_a_literal_is_what_the_model_writes(tiny_chat_model: Path, sampler: str):
    settings = LlmSettings(model=str(tiny_chat_model), n_ctx=2048, n_threads=1, seed=7,
                           grammar_sampler=sampler)
    engine = LlamaEngine(settings)
    try:
        cortex = Cortex(settings, engine=engine)
        for text in ASTRAL:
            assert (await cortex.generate("hi", json_schema={"const": text}, max_tokens=32)).data == text
            r = await cortex.generate("hi", json_schema={"enum": [text, "\u00e9" + text]}, max_tokens=32)
            assert r.data in (text, "\u00e9" + text)
            schema = {"type": "object", "properties": {text: {"const": 1}}, "required": [text]}
            assert (await cortex.generate("hi", json_schema=schema, max_tokens=48)).data == {text: 1}
    finally:
        engine.close()


@pytest.mark.parametrize("lone", ["\ud83d", "a\ude00", "\ude00\ud83d"])
def test_a_lone_surrogate_in_a_literal_is_refused(lone: str) -> None:
    """No UTF-8 spells a lone surrogate: such a value can never be written; it is refused, not asked for."""
    for schema in _schemas(lone):
        with pytest.raises(SchemaError, match="surrogate"):
            compile_schema(schema)
