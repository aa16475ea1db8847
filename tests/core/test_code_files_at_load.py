"""Files that become code are refused at load when another account could change them, as the config's other
trusted files are (``config_file_trust.code_files``): ``sentinel.sensors.termux_bin_dir`` (the programs run
from it), and the model files llama.cpp parses (``llm.model``, ``search.embedding_model``,
``swarm.local.model_path``, ``agent.local.model_path``). The opt-out keeps them, named in the warnings. Each
is judged again where it is used (``tests/sensors/test_termux_bin_trust.py``,
``tests/llm/test_model_file_trust.py``). Before, none was looked at."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.config import load_config
from sentinel_mcp.core.errors import ConfigError

SETTINGS = {
    "sensors.termux_bin_dir": ({"sensors": {"termux_bin_dir": "bin"}}, "bin"),
    "llm.model": ({"llm": {"model": "m.gguf"}}, "m.gguf"),
    "search.embedding_model": ({"search": {"embedding_model": "m.gguf"}}, "m.gguf"),
    "swarm.local.model_path": ({"swarm": {"local": {"model_path": "m.gguf"}}}, "m.gguf"),
    "agent.local.model_path": ({"agent": {"local": {"model_path": "m.gguf"}}}, "m.gguf"),
}


@pytest.fixture
def conf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("SENTINEL_SHARED_FILES", raising=False)
    tmp_path.chmod(0o755)
    d = tmp_path / "conf"
    d.mkdir(mode=0o755)
    (d / "bin").mkdir(mode=0o755)
    (d / "m.gguf").write_bytes(b"GGUF")
    (d / "m.gguf").chmod(0o644)
    return d


def _write(conf: Path, sentinel: dict[str, Any]) -> Path:
    cfg = conf / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {}, "sentinel": {"builtins": [], **sentinel}}))
    cfg.chmod(0o644)
    return cfg


@pytest.mark.parametrize("setting", sorted(SETTINGS))
def test_a_code_file_others_may_write_is_refused_at_load(conf: Path, setting: str) -> None:
    section, name = SETTINGS[setting]
    cfg = _write(conf, section)
    load_config(cfg)
    (conf / name).chmod(0o777 if name == "bin" else 0o666)
    with pytest.raises(ConfigError) as e:
        load_config(cfg)
    assert f"sentinel.{setting}" in str(e.value) and str(conf / name) in str(e.value)


@pytest.mark.parametrize("setting", sorted(SETTINGS))
def test_the_opt_out_keeps_it_named(conf: Path, setting: str, monkeypatch: pytest.MonkeyPatch) -> None:
    section, name = SETTINGS[setting]
    (conf / name).chmod(0o777 if name == "bin" else 0o666)
    monkeypatch.setenv("SENTINEL_SHARED_FILES", "trust")
    cfg = load_config(_write(conf, section))
    assert any(f"sentinel.{setting}" in w and "another account could change it" in w for w in cfg.warnings)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another account takes root")
def test_a_termux_bin_dir_another_account_owns_is_refused(conf: Path) -> None:
    os.chown(conf / "bin", 54321, 54321)
    with pytest.raises(ConfigError, match="termux_bin_dir"):
        load_config(_write(conf, {"sensors": {"termux_bin_dir": "bin"}}))
