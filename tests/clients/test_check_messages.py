"""``sentinel-mcp check`` on the mistakes a first rulebase makes, as the user runs it: each problem names the
file and line and says what to write, never a Prolog internal (``got _9206`` for a guard whose argument
pattern is a variable)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import ROOT

pytestmark = pytest.mark.timeout(120)


def _check(tmp_path: Path, text: str) -> str:
    rb = tmp_path / "mine.pl"
    rb.write_text(text)
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "SENTINEL_DATA_DIR": str(tmp_path / "d"),
           "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-m", "sentinel_mcp", "check", str(rb)], capture_output=True,
                         text=True, timeout=100, env=env, cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    return run.stdout + run.stderr


@pytest.mark.parametrize("head", [
    "guard('files__delete', Args, ok(Args)).",
    "guard('files__delete', _, true).",
    "effect('files__delete', Args, [invalidate(seen(_))]).",
])
def test_a_variable_argument_pattern_says_what_to_write(tmp_path: Path, head: str) -> None:
    out = _check(tmp_path, f"ok(_).\nseen(_) :- fail.\n:- public ok/1, seen/1.\n{head}\n")
    line = next((ln for ln in out.splitlines() if "argument pattern" in ln), "")
    assert line.startswith(f"{tmp_path / 'mine.pl'}:4: error: "), out
    assert "a variable" in line and "[args(All)]" in line, line
    assert not re.search(r"\b_[0-9G]\w*", line), line  # no Prolog variable name
