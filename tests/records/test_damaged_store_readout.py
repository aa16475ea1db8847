"""Read-out commands on a damaged store file answer with one error naming the file: no traceback, and no
hang on a FIFO (never opened to read). Also: ``call`` with arguments nested too deep is a JSON error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def _cli(cfg: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "SENTINEL_DATA_DIR"}
    return subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), *args],
                          capture_output=True, text=True, timeout=60, env=env)


def _config(tmp_path: Path) -> Path:
    cfg = tmp_path / "s.json"
    sentinel = {"builtins": [], "data_dir": str(tmp_path / "d")}
    cfg.write_text(json.dumps({"mcpServers": {}, "sentinel": sentinel}))
    (tmp_path / "d").mkdir(mode=0o700)
    return cfg


def _damage(path: Path, how: str) -> None:
    if how == "fifo":
        os.mkfifo(path, 0o600)
    elif how == "dir":
        path.mkdir(mode=0o700)
    elif how == "garbage":
        path.write_bytes(os.urandom(8192))
    else:  # SQLite's header, then zeros
        path.write_bytes(b"SQLite format 3\x00" + bytes(8192))


@pytest.mark.parametrize("how", ["fifo", "dir", "garbage", "zeros"])
@pytest.mark.parametrize("view", [("audit",), ("facts",), ("facts", "--session", "x")])
def test_a_damaged_store_is_named_not_a_traceback(tmp_path: Path, how: str, view: tuple[str, ...]) -> None:
    cfg = _config(tmp_path)
    store = tmp_path / "d" / ("sentinel.db" if view[0] == "audit" else "facts.db")
    _damage(store, how)
    run = _cli(cfg, *view)
    assert run.returncode != 0
    assert "Traceback" not in run.stderr, run.stderr
    assert str(store) in run.stderr, run.stderr


@pytest.mark.parametrize("deep", ["[" * 30_000, '{"a":' * 20_000, "[" * 30_000 + "]" * 30_000])
def test_call_arguments_nested_too_deep_are_a_json_error(tmp_path: Path, deep: str) -> None:
    run = _cli(_config(tmp_path), "call", "x__y", deep)
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr
    assert "not valid JSON" in run.stderr
