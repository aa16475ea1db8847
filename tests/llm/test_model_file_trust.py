"""A model file is parsed by llama.cpp's native code, so it is held, before each load, to the rule of every
file Sentinel trusts (``llm/model_source.resolve_model_path``, ``core/trusted_code.py``): a GGUF another
account could change (writable by group or others, owned by another account, in a folder another account
may write, through a link another account may repoint) is refused before llama.cpp opens it, for the
gateway's model, the embedding model and ``$SENTINEL_MODEL`` alike. Before, any such file was loaded."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sentinel_mcp.llm.errors import ModelLoadError
from sentinel_mcp.llm.model_source import resolve_model_path

OTHER = 12345
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another account takes root")


@pytest.fixture
def model(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)
    folder = tmp_path / "models"
    folder.mkdir(mode=0o755)
    path = folder / "m.gguf"
    path.write_bytes(b"GGUF" + (3).to_bytes(4, "little") + bytes(64))
    path.chmod(0o644)
    return path


def _refused(path: Path) -> str:
    with pytest.raises(ModelLoadError, match="another account could change it") as e:
        resolve_model_path(str(path))
    return str(e.value)


def test_a_trusted_model_file_is_used(model: Path) -> None:
    assert resolve_model_path(str(model)) == model


@pytest.mark.parametrize("mode", [0o666, 0o646])
def test_a_model_file_others_may_write_is_refused(model: Path, mode: int) -> None:
    model.chmod(mode)
    assert "may be written by group or others" in _refused(model)


def test_a_model_folder_others_may_write_is_refused(model: Path) -> None:
    model.parent.chmod(0o777)
    assert "could be replaced" in _refused(model)


def test_a_link_to_a_model_in_a_shared_folder_is_refused(model: Path, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    model.rename(shared / "m.gguf")
    shared.chmod(0o777)
    model.symlink_to(shared / "m.gguf")
    _refused(model)


def test_sentinel_model_is_held_to_the_rule(model: Path, monkeypatch) -> None:
    monkeypatch.setenv("SENTINEL_MODEL", str(model))
    assert resolve_model_path(None) == model
    model.chmod(0o666)
    with pytest.raises(ModelLoadError, match="SENTINEL_MODEL"):
        resolve_model_path(None)


@as_root
def test_a_model_file_another_account_owns_is_refused(model: Path) -> None:
    os.chown(model, OTHER, OTHER)
    assert f"uid {OTHER}" in _refused(model)


def test_the_opt_out_keeps_it(model: Path, monkeypatch) -> None:
    model.chmod(0o666)
    monkeypatch.setenv("SENTINEL_SHARED_FILES", "trust")
    assert resolve_model_path(str(model)) == model


def test_the_engine_and_the_embedder_refuse_it_before_llama_cpp_opens_it(model: Path) -> None:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    from sentinel_mcp.llm.engine import LlamaEngine
    from sentinel_mcp.llm.settings import LlmSettings
    from sentinel_mcp.search.embedding import embedder_for

    model.chmod(0o666)
    engine = LlamaEngine(LlmSettings(model=str(model), n_ctx=256, n_threads=1))
    with pytest.raises(ModelLoadError, match="another account could change it"):
        engine.resolve()
    assert not engine.loaded
    with pytest.raises(ModelLoadError, match="another account could change it"):
        embedder_for(str(model))
