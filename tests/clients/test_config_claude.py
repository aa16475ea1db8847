"""``sentinel-mcp [-c FILE] config claude`` as README's "Connect Claude Desktop" runs it: the snippet is for a
config that loads (a missing or invalid file is reported now, rc 2, not later as a server that will not start
in Claude's log), and Claude Desktop's Sentinel keeps its state where this shell's ``sentinel-mcp audit``,
``config token`` and ``consent`` read it (Claude does not pass on the shell's environment)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import ROOT

pytestmark = pytest.mark.timeout(120)


def _readme_commands() -> list[list[str]]:
    text = (ROOT / "README.md").read_text()
    block = text.split("### Connect Claude Desktop", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    return [shlex.split(ln.split("#", 1)[0])[1:] for ln in block.splitlines() if ln.strip()]


def _run(tmp_path: Path, argv: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    for k in ("SENTINEL_CONFIG", "SENTINEL_DATA_DIR", "XDG_STATE_HOME"):
        if k not in env:
            full.pop(k, None)
    return subprocess.run([sys.executable, "-m", "sentinel_mcp", *argv], capture_output=True, text=True,
                          timeout=100, env=full, cwd=tmp_path)


def test_the_readme_commands_give_a_snippet_for_a_config_that_loads(tmp_path: Path) -> None:
    plain, with_file = _readme_commands()
    assert plain == ["config", "claude"] and with_file[-2:] == ["config", "claude"], (plain, with_file)
    name = with_file[with_file.index("-c") + 1]
    missing = _run(tmp_path, with_file)
    assert missing.returncode == 2 and not missing.stdout, missing.stdout
    assert f"config file not found: {name}" in missing.stderr, missing.stderr
    (tmp_path / name).write_text('{"mcpServers": {}, "sentinel": {"rulebase": []}}')
    invalid = _run(tmp_path, with_file)
    assert invalid.returncode == 2 and not invalid.stdout and "did you mean 'rulebases'" in invalid.stderr
    (tmp_path / name).write_text('{"mcpServers": {}}')
    ok = _run(tmp_path, with_file)
    assert ok.returncode == 0, ok.stderr
    entry = json.loads(ok.stdout)["mcpServers"]["sentinel"]
    assert entry["args"] == ["--config", str(tmp_path / name), "serve"] and "env" not in entry, entry


def test_the_shells_data_dir_goes_into_the_snippet(tmp_path: Path) -> None:
    data, state = tmp_path / "data", tmp_path / "state"
    run = _run(tmp_path, ["config", "claude"], SENTINEL_DATA_DIR=str(data), XDG_STATE_HOME=str(state))
    assert run.returncode == 0, run.stderr
    entry = json.loads(run.stdout)["mcpServers"]["sentinel"]
    assert entry["env"] == {"SENTINEL_DATA_DIR": str(data), "XDG_STATE_HOME": str(state)}, entry
    assert re.search(r"SENTINEL_DATA_DIR", run.stderr), run.stderr
