"""What-if as a new user does it: copy the shipped rulebase, change one rule, replay. ``replay --rulebase
FILE`` replaces the configured rulebase of the same file name and adds any other; a changed copy saved as
``NEW.pl`` (the README's own example name) therefore joined the original, and every predicate of the two was
an error of its own, with nothing saying why. The refusal now says how the candidate was taken and how to
make it replace the file meant; the README says the same."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import copy_shipped_rulebase

from ..conftest import ROOT

pytestmark = pytest.mark.timeout(180)


def _replay(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "sentinel.json"
    config.write_text(json.dumps({"mcpServers": {}, "sentinel": {
        "rulebases": ["shipped:rulebases/default.pl", "shipped:rulebases/airline.pl"],
        "data_dir": str(tmp_path / "data")}}))
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(config), "replay", *args],
                          capture_output=True, text=True, timeout=150, env=env, cwd=tmp_path)


def _changed_copy(path: Path) -> Path:
    copy_shipped_rulebase("airline.pl", path)  # with the files it includes
    with path.open("a") as f:
        f.write("\nguard('airline__get_flight_status', [flight_number = F], flight_known(F)).\n"
                "flight_known(F) :- atom(F).\n")
    return path


def test_the_readme_names_how_a_candidate_is_taken() -> None:
    text = (ROOT / "README.md").read_text()
    (row,) = [ln for ln in text.splitlines() if ln.startswith("| `sentinel-mcp replay")]
    assert "same file name" in row and "--only" in row, row


def test_a_changed_copy_under_another_name_is_refused_saying_why(tmp_path: Path) -> None:
    new = _changed_copy(tmp_path / "NEW.pl")
    run = _replay(tmp_path, "--rulebase", str(new))
    assert run.returncode == 2, run.stdout + run.stderr
    hint = [ln for ln in run.stderr.splitlines() if ln.startswith("sentinel-mcp replay: NEW.pl")]
    assert hint, run.stderr
    assert "airline.pl" in hint[0] and "--only" in hint[0] and "beside" in hint[0], hint[0]


def test_the_same_copy_named_as_the_file_it_replaces_replays(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    candidate = _changed_copy(tmp_path / "mine" / "airline.pl")
    run = _replay(tmp_path, "--rulebase", str(candidate))
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.search(r"Replayed \d+ recorded call", run.stdout), run.stdout
    assert "names no configured rulebase" not in run.stderr, run.stderr
