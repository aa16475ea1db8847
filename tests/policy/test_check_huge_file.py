"""``sentinel-mcp check`` of a rulebase file far past the loader's bound (``clause_bounds.MAX_FILE_BYTES``):
the loader refuses it by its size without reading it, but the checker read it whole twice (once to see that it
could be read, once for hidden characters), so a 1 GB file ended in a MemoryError traceback under a memory
limit (and took twice its size in memory without one). Now it is the size problem naming the file, rc 1."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from sentinel_mcp.policy.clause_bounds import MAX_FILE_BYTES
from tests.policy.test_cli_and_checker import PROJECT_ROOT

pytestmark = pytest.mark.timeout(180)


def _limited() -> None:  # the memory a check of a small rulebase needs, with room; far below the file's size
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


def test_a_huge_rulebase_file_is_its_size_problem_not_a_memory_error(tmp_path: Path) -> None:
    huge = tmp_path / "huge.pl"
    with open(huge, "wb") as f:
        f.truncate(2 << 30)  # sparse: no disk spent
    run = subprocess.run([sys.executable, "-m", "sentinel_mcp", "check", str(huge)], cwd=tmp_path,
                         env=dict(os.environ, PYTHONPATH=str(PROJECT_ROOT)), capture_output=True, text=True,
                         timeout=150, preexec_fn=_limited)
    assert run.returncode == 1 and "Traceback" not in run.stderr, (run.returncode, run.stderr[-2000:])
    assert f"{huge}:0: error:" in run.stdout and f"more than {MAX_FILE_BYTES:,}" in run.stdout, run.stdout
