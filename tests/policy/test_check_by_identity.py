"""``check --connect`` names tools as the policy does: by identity (``<server>__<tool>``), not by the name
that exposes them. With a server mounted under a prefix, the check compared guards with the exposed names: the
guard of the tool's identity (the one that applies) was "for a tool no upstream has", and a guard on the
exposed name, which never applies (a call is decided by identity), was clean."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sentinel_mcp.paths import PROJECT_ROOT

pytestmark = pytest.mark.timeout(90)


def _check(tmp_path: Path, rules: str) -> str:
    (tmp_path / "rb.pl").write_text(rules)
    config = {
        "mcpServers": {
            "retail": {"command": sys.executable, "args": ["-m", "examples.retail"], "cwd": str(PROJECT_ROOT),
                       "prefix": "r"},
        },
        "sentinel": {"rulebases": [str(tmp_path / "rb.pl")], "data_dir": str(tmp_path / "data")},
    }
    (tmp_path / "sentinel.json").write_text(json.dumps(config))
    r = subprocess.run(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(tmp_path / "sentinel.json"), "check", "--connect"],
        cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(PROJECT_ROOT)), capture_output=True, text=True,
        timeout=80,
    )
    assert "Traceback" not in r.stderr, r.stderr
    return r.stdout + r.stderr


def test_a_guard_is_checked_against_the_tools_identities(tmp_path: Path) -> None:
    out = _check(
        tmp_path,
        "guard('retail__cancel_pending_order', [], confirmed('Cancel it?', [])).\n"
        "guard('r__modify_pending_order_address', [], confirmed('Change it?', [])).\n"
        "guard('retail__return_*', [], confirmed('Return it?', [])).\n",
    )
    assert "rb.pl:1:" not in out and "rb.pl:3:" not in out, out
    assert "rb.pl:2: error: guard for r__modify_pending_order_address, which no upstream has" in out, out


def test_a_guard_on_the_exposed_name_does_not_hide_an_unconditional_one(tmp_path: Path) -> None:
    out = _check(tmp_path, "guard('retail__cancel_pending_order', [], true).\n")
    assert "rb.pl:1: warning: this guard lets retail__cancel_pending_order through on nothing" in out, out
