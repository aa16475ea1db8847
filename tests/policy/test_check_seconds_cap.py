"""The time bound of a rulebase check (check_budget.pl's seconds, and the check child's wall bound built on
it) is a deployment cap, ``SENTINEL_CAP_CHECK_SECONDS``: 10 s unless set (only a positive integer moves a cap,
tests/core/test_deployment_caps.py). Read as a gateway and its check children read it, at import."""

from __future__ import annotations

import os
import subprocess
import sys

from sentinel_mcp.policy import check_process, checker
from sentinel_mcp.policy.load_rehearsal import REHEARSAL_SECONDS


def test_the_check_time_bound_is_ten_seconds_unless_a_deployment_lowers_it():
    if "SENTINEL_CAP_CHECK_SECONDS" not in os.environ:
        assert (checker.CHECK_SECONDS, check_process.WALL_SECONDS) == (10, REHEARSAL_SECONDS + 20)
    read = ("from sentinel_mcp.policy.checker import CHECK_SECONDS; "
            "from sentinel_mcp.policy.check_process import WALL_SECONDS; print(CHECK_SECONDS, WALL_SECONDS)")
    env = {**os.environ, "SENTINEL_CAP_CHECK_SECONDS": "3"}
    out = subprocess.run([sys.executable, "-c", read], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["3", str(REHEARSAL_SECONDS + 13)], out.stdout
