"""Fixtures: tiny random-weight GGUF models written into a temporary folder, and engines on them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tests.support.tiny_gguf import CHATML_TEMPLATE, write_tiny_gguf

from sentinel_mcp.llm.engine import LlamaEngine
from sentinel_mcp.llm.grammar_registry import GrammarRegistry
from sentinel_mcp.llm.settings import LlmSettings
from sentinel_mcp.paths import GRAMMARS_DIR

# never loops: only max_tokens or a cancellation ends it (for cancellation and progress tests)
ENDLESS_GBNF = 'root ::= [a-z] root\n'


@pytest.fixture(scope="session")
def tiny_chat_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_gguf(
        tmp_path_factory.mktemp("models") / "tiny-chatml.gguf", chat_template=CHATML_TEMPLATE
    )


@pytest.fixture(scope="session")
def tiny_plain_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_gguf(tmp_path_factory.mktemp("models") / "tiny-plain.gguf", n_ctx=512, seed=1)


@pytest.fixture(scope="session")
def grammars_with_endless(tmp_path_factory: pytest.TempPathFactory) -> GrammarRegistry:
    d = tmp_path_factory.mktemp("grammars")
    for f in GRAMMARS_DIR.glob("*.gbnf"):
        shutil.copy(f, d / f.name)
    (d / "endless.gbnf").write_text(ENDLESS_GBNF)
    return GrammarRegistry.load(d)


@pytest.fixture
def tiny_settings(tiny_chat_model: Path) -> LlmSettings:
    return LlmSettings(
        model=str(tiny_chat_model), n_ctx=2048, n_threads=1, seed=7, temperature=0.8, max_tokens=4096
    )


@pytest.fixture
def engine(tiny_settings: LlmSettings):
    e = LlamaEngine(tiny_settings)
    yield e
    e.close()


@pytest.fixture
def no_model_env(monkeypatch: pytest.MonkeyPatch):
    """No $SENTINEL_MODEL and no model package: the 'nothing installed' situation."""
    monkeypatch.delenv("SENTINEL_MODEL", raising=False)
    monkeypatch.setattr("sentinel_mcp.llm.model_source.MODEL_PACKAGE", "sentinel_test_no_such_model_package")
