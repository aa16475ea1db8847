"""The key files ``sentinel.a2a`` names (``card_signing_key``, a ``peer_keys`` or ``trusted_keys`` path)
are read while the config loads: a FIFO there held ``config show`` and ``serve`` for ever (a plain open waits
for a writer), ``/dev/zero`` was read until memory ran out (a MemoryError traceback), a huge file whole. Each
is now a config error naming the key (rc 2), read bounded as every other file a config names."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import ROOT

pytestmark = pytest.mark.timeout(180)


def _limited() -> None:  # a read that never ends must not take the shared machine's memory with it
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


def _target(tmp_path: Path, kind: str) -> str:
    if kind == "zero":
        return "/dev/zero"
    path = tmp_path / f"key-{kind}.pem"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "huge":
        with open(path, "wb") as f:
            f.truncate(64 << 20)
    else:
        path.mkdir()
    return str(path)


@pytest.mark.parametrize("kind", ["fifo", "zero", "huge", "directory"])
@pytest.mark.parametrize("where", ["card_signing_key", "peer_keys", "trusted_keys"])
def test_a_key_path_that_is_no_key_file_is_one_config_error(tmp_path: Path, kind: str, where: str) -> None:
    target = _target(tmp_path, kind)
    a2a = {"card_signing_key": target} if where == "card_signing_key" else (
        {"peer_keys": {"peer": target}} if where == "peer_keys" else {"trusted_keys": [target]})
    cfg = tmp_path / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {}, "sentinel": {"a2a": a2a}}))
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "SENTINEL_DATA_DIR": str(tmp_path / "d"),
           "PYTHONPATH": str(ROOT)}
    try:
        run = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "config", "show"],
                             capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path,
                             preexec_fn=_limited)
    except subprocess.TimeoutExpired:
        pytest.fail(f"config show waited on {target} for a minute")
    assert run.returncode == 2 and not run.stdout, (run.returncode, run.stdout, run.stderr[-2000:])
    assert f"sentinel.a2a.{where}" in run.stderr and "Traceback" not in run.stderr, run.stderr[-2000:]
