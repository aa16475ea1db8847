"""README's configuration example, as a user pastes it: it loads once its ``${VAR}`` are set (and names the
first unset one otherwise), and the interpreter it runs the airline example with is one the README says how to
find (``python`` on a PATH is often not the one Sentinel is installed in: from a pipx or venv install the
example is "No module named 'examples'")."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sentinel_mcp.config import ConfigError, parse_config

from ..conftest import ROOT

README = (ROOT / "README.md").read_text()
SECTION = README.split("## Configuration", 1)[1].split("\n## ", 1)[0]


def _snippet() -> dict:
    found = re.search(r"```json\n(.*?)```", SECTION, re.S)
    assert found, SECTION[:400]
    return json.loads(found.group(1))


def test_the_example_loads_with_its_variables_set(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("FILES_TOKEN", "SENTINEL_TOKEN", "CI_BOT_TOKEN"):
        monkeypatch.setenv(name, f"{name.lower()}-0123456789abcdef")
    cfg = parse_config(_snippet(), source=str(tmp_path / "sentinel.json"), base_dir=tmp_path)
    assert set(cfg.mcp_servers) == {"airline", "files", "legacy"}


def test_an_unset_variable_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("FILES_TOKEN", "SENTINEL_TOKEN", "CI_BOT_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ConfigError) as caught:
        parse_config(_snippet(), source=str(tmp_path / "sentinel.json"), base_dir=tmp_path)
    assert "${FILES_TOKEN} is not set" in str(caught.value)


def test_the_readme_says_which_python_runs_the_example() -> None:
    command = _snippet()["mcpServers"]["airline"]["command"]
    assert command == "python"
    note = SECTION.split("```", 2)[2].split("Per server:", 1)[0]
    assert "config show" in note and "interpreter" in note, note
