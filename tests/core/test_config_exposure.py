"""A config file other users can read that holds secrets written in it (a principal's token, an upstream's API
key in its env or headers) loads with a warning naming the file, its mode and the places (shown at
start-up); the same file at mode 0600, or with its secrets as ``${VAR}``, loads without one."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sentinel_mcp.config import load_config


def _config(tmp_path: Path, mode: int, **server: object) -> Path:
    cfg = tmp_path / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {"gh": {"command": "x", **server}},
                               "sentinel": {"data_dir": str(tmp_path / "state")}}))
    os.chmod(cfg, mode)
    return cfg


@pytest.mark.parametrize("server", [
    {"env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_written_here"}},
    {"env": {"OPENAI_API_KEY": "sk-written-here"}},
])
@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604])
def test_a_readable_config_holding_a_written_secret_is_warned_about(tmp_path, server, mode):
    cfg = _config(tmp_path, mode, **server)
    warnings = load_config(cfg).warnings
    assert any("readable by other users" in w and str(cfg) in w and "mcpServers.gh.env." in w
               for w in warnings), warnings


def test_a_principal_token_written_in_a_readable_config_is_warned_about(tmp_path):
    cfg = tmp_path / "sentinel.json"
    cfg.write_text(json.dumps({"sentinel": {"principals": [{"name": "bob", "token": "b" * 24}]}}))
    os.chmod(cfg, 0o644)
    assert any("sentinel.principals[0].token" in w for w in load_config(cfg).warnings)


def test_no_warning_at_0600_or_for_secrets_from_the_environment(tmp_path, monkeypatch):
    assert not load_config(_config(tmp_path, 0o600, env={"OPENAI_API_KEY": "sk-x"})).warnings
    monkeypatch.setenv("KEY_FROM_ENV", "sk-y")
    assert not load_config(_config(tmp_path, 0o644, env={"OPENAI_API_KEY": "${KEY_FROM_ENV}"},
                                   args=["--verbose"])).warnings
