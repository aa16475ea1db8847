"""Grammar files: loaded and checked at start-up; the Python checker agrees with llama.cpp's parser."""

from __future__ import annotations

from pathlib import Path

import pytest

from sentinel_mcp.llm.engine import LlamaEngine
from sentinel_mcp.llm.errors import GrammarError
from sentinel_mcp.llm.gbnf_syntax import GbnfSyntaxError, check_gbnf
from sentinel_mcp.llm.grammar_registry import GrammarRegistry
from sentinel_mcp.llm.output_models import GRAMMAR_MODELS
from sentinel_mcp.llm.settings import LlmSettings
from sentinel_mcp.paths import GRAMMARS_DIR

GOOD = [
    'root ::= "a"',
    'root ::= ( "x" | [a-z]+ ) "y"?  # comment\n',
    'root ::= item{2,5} tail\nitem ::= [0-9]\ntail ::= "\\n" | "\\u00e9" | "\\x41"',
    'root ::= (\n  "a" |\n  "b"\n)',
    'root ::= [^"\\\\] .* "end"',
    'root ::= "a"{3}',
    'root ::= "a"{0,}',
    "root ::= x\nx ::= \"q\" root | \"z\"",
]
BAD = [
    ('root ::= "unterminated', "unexpected end of input"),
    ('root ::= missing', "undefined rule 'missing'"),
    ('root ::= "a" |\nroot ::= "b"', "expecting newline or end of rule"),
    ('rooty ::= "a"', "no 'root' rule"),
    ('root = "a"', "expecting ::="),
    ('root ::= ( "a" "b"', "expecting ')'"),
    ('root ::= "\\q"', "unknown escape"),
    ('root ::= * "a"', "must follow an item"),
    ('root ::= "a"{3001}', "exceeds llama.cpp's limit"),
    ('root ::= "a"{x}', "expecting an integer"),
    ('root ::= [a-z', "unexpected end of input"),
    ('', "defines no rules"),
]
# stricter than llama.cpp, which silently keeps the last definition
PYTHON_ONLY = [('root ::= "a"\nroot ::= "b"', "rule 'root' is defined twice")]


def test_shipped_grammars_load_with_their_models():
    registry = GrammarRegistry.load()
    assert registry.names() == sorted(GRAMMAR_MODELS)
    for g in registry:
        assert g.model is GRAMMAR_MODELS[g.name]
        assert g.path == GRAMMARS_DIR / f"{g.name}.gbnf"


@pytest.mark.parametrize("src", GOOD)
def test_checker_accepts_valid_gbnf(src):
    check_gbnf(src)


@pytest.mark.parametrize("src,message", BAD + PYTHON_ONLY)
def test_checker_rejects_invalid_gbnf_with_position(src, message):
    with pytest.raises(GbnfSyntaxError, match=message.replace("(", r"\(").replace(")", r"\)")):
        check_gbnf(src)


def test_broken_grammar_file_names_the_file_and_error(tmp_path: Path):
    for f in GRAMMARS_DIR.glob("*.gbnf"):
        (tmp_path / f.name).write_text(f.read_text())
    (tmp_path / "critic.gbnf").write_text('root ::= "{" verdict "}"\n')
    with pytest.raises(GrammarError) as err:
        GrammarRegistry.load(tmp_path)
    assert "critic.gbnf" in str(err.value) and "undefined rule 'verdict'" in str(err.value)
    assert "line 1" in str(err.value)


def test_missing_grammar_file_is_reported(tmp_path: Path):
    (tmp_path / "action.gbnf").write_text((GRAMMARS_DIR / "action.gbnf").read_text())
    with pytest.raises(
        GrammarError, match="lacks critic.gbnf, plan.gbnf, risk.gbnf, tool_call.gbnf, verifier.gbnf"
    ):
        GrammarRegistry.load(tmp_path)


def test_unknown_grammar_name_lists_the_known_ones():
    with pytest.raises(GrammarError, match="unknown grammar 'poem'; known grammars: action, critic"):
        GrammarRegistry.load().get("poem")


@pytest.mark.timeout(60)
def test_checker_agrees_with_llama_cpp(tiny_chat_model: Path):
    """Differential check: every sample the Python checker accepts, llama.cpp compiles, and vice versa."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    engine = LlamaEngine(LlmSettings(model=str(tiny_chat_model), n_ctx=256, n_threads=1))
    try:
        for g in GrammarRegistry.load():
            engine.check_grammar(g.text, g.name)  # raises if llama.cpp rejects a shipped grammar
        for src in GOOD:
            engine.check_grammar(src, "good sample")
        for src, _ in BAD:
            if not src:
                continue  # llama.cpp treats an empty grammar as "no grammar"
            with pytest.raises(GrammarError, match="llama.cpp rejected the grammar"):
                engine.check_grammar(src, "bad sample")
    finally:
        engine.close()
