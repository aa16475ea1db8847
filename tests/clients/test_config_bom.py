"""A config saved by a Windows editor starts with a UTF-8 byte order mark (Notepad's "UTF-8 with BOM"). JSON
allows a reader to pass over it (RFC 8259, 8.1); Sentinel refused it in Python's own words ("Unexpected UTF-8
BOM (decode using utf-8-sig)"), which say nothing a user can act on. Now it is read as the same file without
it, and a mistake further on is still named at its own line; a U+FEFF anywhere else is a character of the
text, as before."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import ROOT

pytestmark = pytest.mark.timeout(120)

BOM = "\ufeff".encode()


def _show(tmp_path: Path, data: bytes) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "sentinel.json"
    path.write_bytes(data)
    os.chmod(path, 0o600)
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "SENTINEL_DATA_DIR": str(tmp_path / "d"),
           "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(path), "config", "show"],
                          capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)


def test_a_config_with_a_bom_loads_as_without_it(tmp_path: Path) -> None:
    text = ('{\r\n  "mcpServers": {"s": {"command": "python3"}},\r\n'
            '  "sentinel": {"policy": {"default": "deny"}}\r\n}')
    run = _show(tmp_path, BOM + text.encode())
    assert run.returncode == 0, run.stderr
    shown = json.loads(run.stdout)
    assert list(shown["mcpServers"]) == ["s"] and shown["sentinel"]["policy"]["default"] == "deny"


@pytest.mark.parametrize("text, words", [
    ('{\n  "mcpServers": {},\n  "sentinel": {"http": {"port": "80"}}\n}', ["line 3", "sentinel.http.port"]),
    ('{\n  "mcpServers": {},\n  "sentinel": {},\n}', ["line 3", "trailing comma"]),
    ('{\n  "mcpServers": {},\n  "mcpServers": {}\n}', ["line 3", "twice"]),
])
def test_a_mistake_after_a_bom_is_named_at_its_line(tmp_path: Path, text: str, words: list[str]) -> None:
    run = _show(tmp_path, BOM + text.encode())
    assert run.returncode == 2 and not run.stdout, (run.stdout, run.stderr)
    assert "BOM" not in run.stderr, run.stderr
    for w in words:
        assert w in run.stderr, (w, run.stderr)


@pytest.mark.parametrize("text", ['{"mcpServers": {}}' + "\ufeff", '\n\ufeff{"mcpServers": {}}',
                                  BOM.decode() * 2 + "{}"])
def test_a_bom_anywhere_but_the_start_is_no_json(tmp_path: Path, text: str) -> None:
    run = _show(tmp_path, text.encode())
    assert run.returncode == 2 and not run.stdout and "invalid JSON" in run.stderr, (run.stdout, run.stderr)
