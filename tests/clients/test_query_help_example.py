"""``sentinel-mcp query --help`` gives an example goal: run as it is against the airline example (with
``--connect``, so the facts it needs are fetched), it proves. Before, the example named ``booking_status/2``,
which no shipped rulebase defines: a new user's first query was refused as undefined."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import ROOT

pytestmark = pytest.mark.timeout(180)


def test_the_help_example_goal_proves_against_the_airline_example(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "SENTINEL_DATA_DIR": str(tmp_path / "d"),
           "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    env.pop("SENTINEL_CONFIG", None)
    help_text = subprocess.run([sys.executable, "-m", "sentinel_mcp", "query", "--help"], capture_output=True,
                               text=True, timeout=60, env=env).stdout
    found = re.search(r"e\.g\. '([^']+)'", help_text)
    assert found, help_text
    config = tmp_path / "sentinel.json"
    config.write_text(json.dumps({
        "mcpServers": {"airline": {"command": sys.executable, "args": ["-m", "examples.airline"]}},
        "sentinel": {"rulebases": ["shipped:rulebases/default.pl", "shipped:rulebases/airline.pl"],
                     "seeds": {"current_user": "mia_li_3668", "today": "2024-05-15"}, "builtins": []},
    }))
    run = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(config), "query", "--connect",
                          found.group(1)], capture_output=True, text=True, timeout=150, env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    answer = json.loads(run.stdout)
    assert answer["error"] is None and answer["solutions"], answer
