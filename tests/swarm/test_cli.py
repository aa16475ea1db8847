"""``sentinel-mcp swarm`` as a real subprocess: build with a progress bar, status, list, signals."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.swarm.support.scripted_model import PLAN_PATHS, SPEC
from tests.swarm.support.swarm_fixtures import FAST_OPENAI, NO_TOOLS

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def cli(tmp_path: Path, model_server):
    config = tmp_path / "sentinel.json"
    config.write_text(
        json.dumps(
            {
                "sentinel": {
                    "data_dir": str(tmp_path / "data"),
                    "swarm": {"backend": "openai", "openai": FAST_OPENAI, "verify": NO_TOOLS},
                }
            }
        )
    )
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(SPEC))
    env = dict(os.environ, SWARM_OPENAI_BASE_URL=model_server.url, SWARM_OPENAI_API_KEY="test-key")

    def command(*args: str) -> list[str]:
        return [sys.executable, "-m", "sentinel_mcp", "-c", str(config), "swarm", *args]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            command(*args), env=env, capture_output=True, text=True, timeout=60, check=False
        )

    return run, command, env, spec


def test_build_status_and_list(cli, tmp_path) -> None:
    run, _, _, spec = cli
    done = run("build", str(spec))
    assert done.returncode == 0, done.stderr
    assert (
        f"[########################] {len(PLAN_PATHS) + 2}/{len(PLAN_PATHS) + 2} COMPLETED" in done.stderr
    )  # the bar
    assert "[PLANNING]" not in done.stdout and ": COMPLETED" in done.stdout
    task_id = done.stdout.split()[1].rstrip(":")
    assert (tmp_path / "data" / "swarm" / task_id / "app/src/main/AndroidManifest.xml").is_file()

    status = run("status", task_id, "--json")
    assert status.returncode == 0 and json.loads(status.stdout)["state"] == "COMPLETED"
    listed = run("list")
    assert listed.returncode == 0 and task_id in listed.stdout and "COMPLETED" in listed.stdout
    assert run("status", "t20990101-000000-000000").returncode == 1


def test_invalid_spec_exits_2_with_what_is_wrong(cli, tmp_path) -> None:
    run, _, _, spec = cli
    spec.write_text(json.dumps(dict(SPEC, min_sdk=5, features=["a", "A"])))
    done = run("build", str(spec))
    assert done.returncode == 2
    assert "min_sdk: Input should be greater than or equal to 21" in done.stderr
    assert "features: Value error" not in done.stderr and "features: features must be unique" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("minutes", ["0", "-0", "nan"])
def test_a_cap_of_no_time_is_refused_not_taken_for_no_cap(cli, model_server, minutes) -> None:
    """Found by red team 'swarm' (rt-swarm): ``--max-minutes 0`` was read as "no cap given", so the build ran
    under the full 90 minutes instead of being refused; nothing is built on a cap that holds no time."""
    run, _, _, spec = cli
    done = run("build", str(spec), "--max-minutes", minutes)
    assert done.returncode == 2, done.stderr
    assert "max_wall_seconds" in done.stderr and "Traceback" not in done.stderr
    assert model_server.requests == []


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero", "directory", "huge", "not utf-8", "huge on stdin"])
def test_a_spec_that_is_not_a_small_utf8_file_exits_2_with_what_is_wrong(cli, tmp_path, kind) -> None:
    """``swarm build`` read its spec whole with a plain open: a FIFO hung it for ever, ``/dev/zero`` took
    2.6 GB in 4.5 s before a MemoryError traceback, bytes that are not UTF-8 ended in a traceback. Now the
    spec is a regular file (or stdin) of at most 64 KiB in UTF-8, or exit 2 naming the problem."""
    run, command, env, spec = cli
    stdin = None
    if kind == "fifo":
        path = str(tmp_path / "spec.fifo")
        os.mkfifo(path)
    elif kind == "/dev/zero":
        path = "/dev/zero"
    elif kind == "directory":
        path = str(tmp_path)
    elif kind == "huge":
        spec.write_text(json.dumps(dict(SPEC, description="x" * 200_000)))
        path = str(spec)
    elif kind == "not utf-8":
        spec.write_bytes(b'{"app_name": "' + bytes([0xFF, 0xFE]) + b'"}')
        path = str(spec)
    else:
        path, stdin = "-", json.dumps(dict(SPEC, description="x" * 200_000))
    done = subprocess.run(
        command("build", path), env=env, capture_output=True, text=True, timeout=30, check=False, input=stdin
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr
    assert any(w in done.stderr for w in ("not a regular file", "too large", "not UTF-8")), done.stderr


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_cancels_the_build_and_keeps_state(cli, model_server, tmp_path, sig, code) -> None:
    _, command, env, spec = cli
    model_server.hold.clear()
    proc = subprocess.Popen(
        command("build", str(spec)), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while not model_server.requests and time.monotonic() < deadline:
            time.sleep(0.02)
        assert model_server.requests, "the build never called the model"
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        model_server.hold.set()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, err
    assert "FAILED (cancelled)" in out
    db = sqlite3.connect(tmp_path / "data" / "swarm" / "swarm.db")
    assert db.execute("SELECT state, error FROM tasks").fetchall() == [("FAILED", "cancelled")]
    assert db.execute("SELECT role, status FROM api_calls").fetchall() == [("planner", "ERROR")]
    assert not (tmp_path / "data" / "swarm" / "swarm.lock").exists()
