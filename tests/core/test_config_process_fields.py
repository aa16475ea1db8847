"""How a stdio upstream is started (``command``, ``env``, ``cwd``) is checked when the config loads: an empty
command, an environment variable name that is empty or holds ``=`` (no process's environment can hold one),
or an empty ``cwd`` is a config error naming the server, the key and its line (rc 2, nothing started). Before,
each loaded and the upstream failed at every start, far from the line ("ValueError: illegal environment
variable name", reconnecting for ever), or was started with a variable named ``""``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import ROOT

pytestmark = pytest.mark.timeout(120)


def _show(tmp_path: Path, server: dict) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "sentinel.json"
    path.write_text(json.dumps({"mcpServers": {"s": server}}, indent=2))
    os.chmod(path, 0o600)
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "SENTINEL_DATA_DIR": str(tmp_path / "d"),
           "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(path), "config", "show"],
                          capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)


@pytest.mark.parametrize("server, words", [
    ({"command": ""}, ["mcpServers.s.command", "empty"]),
    ({"command": "   "}, ["mcpServers.s.command", "empty"]),
    ({"command": "python3", "env": {"A=B": "x"}}, ["mcpServers.s.env", "'A=B'", "="]),
    ({"command": "python3", "env": {"=A": "x"}}, ["mcpServers.s.env", "'=A'"]),
    ({"command": "python3", "env": {"": "x"}}, ["mcpServers.s.env", "empty"]),
    ({"command": "python3", "cwd": ""}, ["mcpServers.s.cwd", "empty"]),
])
def test_a_process_that_cannot_be_started_as_configured_is_a_config_error(tmp_path: Path, server: dict,
                                                                         words: list[str]) -> None:
    run = _show(tmp_path, server)
    assert run.returncode == 2 and not run.stdout, (run.returncode, run.stdout, run.stderr)
    assert "(line " in run.stderr and "Traceback" not in run.stderr, run.stderr
    for w in words:
        assert w in run.stderr, (w, run.stderr)


def test_a_plain_process_still_loads(tmp_path: Path) -> None:
    server = {"command": "python3", "args": ["", " "], "env": {"PATH": "/usr/bin", "lower_case": "",
                                                             "ProgramFiles(x86)": "x"}, "cwd": "."}
    run = _show(tmp_path, server)
    assert run.returncode == 0, run.stderr
