"""The terminal chat test where tmux is missing: it must FAIL with a clear reason, never skip (``make test``
installs tmux, so a skip would only hide that the chat went untested)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)
ROOT = Path(__file__).resolve().parents[2]


def test_chat_terminal_fails_not_skips_without_tmux(tmp_path: Path) -> None:
    empty = tmp_path / "bin"  # a PATH with no tmux on it (python and the CLI are called by absolute path)
    empty.mkdir()
    env = {**os.environ, "PATH": str(empty)}
    # (its own --basetemp: a pytest started with none makes /tmp/pytest-of-<user> owner-only again, and the
    # swarm tests of a parallel worker, whose tools run as another uid, lost their way to their tmp_path)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA",
                        "--basetemp", str(tmp_path / "inner"),
                        str(ROOT / "tests" / "agent" / "test_chat_terminal.py")],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=110)
    out = r.stdout + r.stderr
    assert r.returncode != 0, out
    summary = out.strip().splitlines()[-1]  # e.g. "1 error in 0.28s": a fixture failing is an error
    assert "skipped" not in summary and ("failed" in summary or "error" in summary), out
    assert "tmux is not installed" in out, out
