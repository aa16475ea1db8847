"""The config mistakes a new user makes, each through the command they would run
(``sentinel-mcp -c FILE config show``): the error names the file, the line and the problem in words that say
what to change, rc 2, nothing else printed. Before, a pasted VS Code comment, a trailing comma, a tab typed
into a string, an empty file or a YAML file each got the JSON parser's bare words (``Expecting value``,
``Invalid control character at``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import ROOT

pytestmark = pytest.mark.timeout(120)

CASES = {
    "comment": ("mcp.json", '{\n  // my servers\n  "servers": {}\n}\n', ["line 2", "comment"]),
    "block comment": ("mcp.json", '{\n  "servers": {} /* later */\n}\n', ["line 2", "comment"]),
    "trailing comma in an object": ("s.json", '{\n  "mcpServers": {},\n}\n', ["line 2", "trailing comma"]),
    "trailing comma in a list": ("s.json", '{"sentinel": {"rulebases": [\n "a.pl",\n ]}}', ["line 2",
                                                                                         "trailing comma"]),
    "single quotes": ("s.json", "{\n  'mcpServers': {}\n}\n", ["line 2", "double quotes"]),
    "tab in a string": ("s.json", '{\n  "mcpServers": {"a": {"command": "py\tthon"}}\n}\n',
                        ["line 2", "U+0009", "\\t"]),
    "empty file": ("s.json", "", ["empty"]),
    "yaml": ("sentinel.yaml", "mcpServers:\n  a:\n    command: python\n", ["JSON", "YAML"]),
    "yaml named json": ("s.json", "mcpServers:\n  a:\n    command: python\n", ["line 1", "YAML"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_config_mistake_is_named_with_its_line_and_what_to_change(tmp_path: Path, case: str) -> None:
    name, text, expected = CASES[case]
    path = tmp_path / name
    path.write_text(text)
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "SENTINEL_DATA_DIR": str(tmp_path / "d"),
           "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(path), "config", "show"],
                         capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
    assert run.returncode == 2 and not run.stdout, (run.stdout, run.stderr)
    (line,) = run.stderr.splitlines()
    assert line.startswith(f"sentinel-mcp: invalid JSON in {path}"), line
    for words in expected:
        assert words in line, line
    assert not (tmp_path / "d").exists()  # nothing started, nothing written
