"""``${VAR}`` in an ``envFile`` value is read as a shell and docker compose read it: expanded in a plain or a
double-quoted value, never in a single-quoted one (red team "config11"). Every value of the file used to be
expanded with the config's strings, after the file was read: a secret holding ``${...}`` literally (a
generated password) was changed, or refused as an unset variable, and a value written by whoever may write
the env file pulled in another variable of Sentinel's environment (``'${SENTINEL_SEAL_KEY}'``) for the
upstream. A value is expanded once: what a variable gave is never read for variables again."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sentinel_mcp.config import load_config
from sentinel_mcp.core.errors import ConfigError


def _env(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> dict[str, str]:
    env_file = tmp_path / "secrets.env"
    env_file.write_text(text)
    os.chmod(env_file, 0o600)
    cfg = tmp_path / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {"s": {"command": "x", "envFile": "secrets.env",
                                                    **({"env": env} if env else {})}}}))
    os.chmod(cfg, 0o600)
    spec = load_config(cfg).mcp_servers["s"]
    return dict(spec.env or {})


@pytest.fixture(autouse=True)
def _vars(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RT_SECRET", "the-seal-key-value")
    monkeypatch.setenv("RT_BRACES", "${RT_SECRET}")  # a variable whose value reads as another variable
    monkeypatch.delenv("RT_UNSET", raising=False)


@pytest.mark.parametrize("line, value", [
    ("A='p${RT_SECRET}q'", "p${RT_SECRET}q"),
    ("A='${RT_UNSET}'", "${RT_UNSET}"),  # no "not set" error: nothing is a variable inside single quotes
    ("A='${RT_UNSET:-x}'", "${RT_UNSET:-x}"),
    ("export A='${env:RT_SECRET}' # a comment", "${env:RT_SECRET}"),
    ("A='${input:x}'", "${input:x}"),
    ("A='${userHome}/k'", "${userHome}/k"),
])
def test_a_single_quoted_value_is_taken_as_written(tmp_path: Path, line: str, value: str) -> None:
    assert _env(tmp_path, line + "\nB=1\n") == {"A": value, "B": "1"}


@pytest.mark.parametrize("line", ["A=${RT_SECRET}", 'A="${RT_SECRET}"', "A=${RT_UNSET:-the-seal-key-value}"])
def test_a_plain_or_double_quoted_value_is_expanded(tmp_path: Path, line: str) -> None:
    assert _env(tmp_path, line + "\n") == {"A": "the-seal-key-value"}


@pytest.mark.parametrize("line", ["A=${RT_BRACES}", 'A="${RT_BRACES}"'])
def test_a_value_is_expanded_once(tmp_path: Path, line: str) -> None:
    """What a variable gave is the value: the text ``${RT_SECRET}`` it holds is not read again."""
    assert _env(tmp_path, line + "\n") == {"A": "${RT_SECRET}"}


def test_an_unset_variable_in_a_plain_value_names_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as refused:
        _env(tmp_path, "A=${RT_UNSET}\n")
    assert "RT_UNSET" in str(refused.value) and "envFile" in str(refused.value)


def test_the_configs_own_env_is_still_expanded_and_wins(tmp_path: Path) -> None:
    got = _env(tmp_path, "A='${RT_SECRET}'\nB=1\n", env={"A": "${RT_SECRET}", "C": "${RT_BRACES}"})
    assert got == {"A": "the-seal-key-value", "B": "1", "C": "${RT_SECRET}"}

