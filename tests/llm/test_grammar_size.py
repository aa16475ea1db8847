"""A caller's json_schema may make a grammar only so large (red team 'swarm' 4).

The bounds on a schema (64 KB, 16,384 repetitions in all) are counted on the schema as written, but the
grammar converter copies what ``allOf`` refers to into every place that uses it: 3 KB naming one object of 60
strings of up to 250 characters (within every bound) from 20 properties made a 2.5 MB grammar, which took 9 s
to check and 6 s more for llama.cpp to compile while holding the model (230 MB); 400 such properties kept
this test busy for minutes. The grammar is now bounded as it is made: past the bound the schema is refused,
before the model is asked.
"""

from __future__ import annotations

import pytest

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")

from sentinel_mcp.llm import schema_grammar
from sentinel_mcp.llm.cortex import Cortex
from sentinel_mcp.llm.engine import LlamaEngine
from sentinel_mcp.llm.errors import SchemaError
from sentinel_mcp.llm.schema_grammar import MAX_GRAMMAR_BYTES, compile_schema

pytestmark = pytest.mark.timeout(120)
# one object of 60 strings of up to 250 characters: 15,000 repetitions, within the schema's bound
WIDE = {"type": "object", "properties": {f"k{i}": {"type": "string", "maxLength": 250} for i in range(60)}}


def _copies(n: int, use) -> dict:  # noqa: ANN001
    return {"type": "object", "definitions": {"a": WIDE}, "properties": {f"p{i}": use() for i in range(n)}}


COPIED = {
    "allOf with another": lambda: {"allOf": [{"$ref": "#/definitions/a"}, {"type": "object"}]},
    "allOf alone, twice": lambda: {"allOf": [{"$ref": "#/definitions/a"}, {"$ref": "#/definitions/a"}]},
}


@pytest.mark.parametrize("n", [20, 400])
@pytest.mark.parametrize("spelling", sorted(COPIED))
def test_a_schema_whose_grammar_outgrows_the_bound_is_refused(spelling: str, n: int) -> None:
    made: list[int] = []
    real = schema_grammar.check_gbnf

    def measured(text: str) -> None:
        made.append(len(text))
        real(text)

    schema = _copies(n, COPIED[spelling])
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(schema_grammar, "check_gbnf", measured)
        with pytest.raises(SchemaError, match=f"grammar of more than {MAX_GRAMMAR_BYTES} bytes"):
            compile_schema(schema)
    assert not made  # nothing that large was read by the checker (or went on to llama.cpp)


def test_the_largest_schemas_within_the_bounds_still_compile() -> None:
    """What the repetition bound lets through, once, fits the grammar bound with room to spare."""
    shared = _copies(30, lambda: {"$ref": "#/definitions/a"})  # $ref alone: one rule, named 30 times
    for schema in (WIDE, _copies(1, COPIED["allOf with another"]), shared):
        assert len(compile_schema(schema)) < MAX_GRAMMAR_BYTES


async def test_the_model_is_never_asked_with_such_a_grammar(engine: LlamaEngine) -> None:
    cortex = Cortex(engine.settings, engine=engine)
    with pytest.raises(SchemaError, match="grammar of more than"):
        await cortex.generate("x", json_schema=_copies(20, COPIED["allOf with another"]), max_tokens=8)
    assert not engine.history and not engine.loaded
