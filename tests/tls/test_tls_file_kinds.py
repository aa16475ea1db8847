"""A TLS file a config names that is a FIFO: an upstream's CA was opened at every connect and the open
waited for a writer for ever (``check --connect`` never ended); the front's certificate or key was said to be
"not found" (``tls init`` offered to make one). Each is refused as "not a regular file", naming the file,
before anything opens it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import ROOT, free_port

pytestmark = pytest.mark.timeout(240)


def _run(tmp_path: Path, config: dict, *args: str) -> subprocess.CompletedProcess[str]:
    cfg = tmp_path / "sentinel.json"
    cfg.write_text(json.dumps(config))
    os.chmod(cfg, 0o600)
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "PYTHONPATH": str(ROOT)}
    try:
        return subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), *args],
                              capture_output=True, text=True, timeout=90, env=env, cwd=tmp_path,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail(f"sentinel-mcp {' '.join(args)} waited on a TLS file for 90 s")


def _fifo(tmp_path: Path, name: str) -> str:
    path = tmp_path / name
    os.mkfifo(path, 0o600)
    return str(path)


def test_an_upstream_ca_that_is_a_fifo_is_refused_at_connect(tmp_path: Path) -> None:
    ca = _fifo(tmp_path, "ca.pem")
    run = _run(tmp_path, {
        "mcpServers": {"r": {"url": "https://127.0.0.1:9/mcp", "tls": {"ca": ca}}},
        "sentinel": {"rulebases": ["shipped:rulebases/default.pl"], "data_dir": str(tmp_path / "d")},
    }, "check", "--connect")
    assert "not a regular file" in run.stderr and ca in run.stderr, run.stderr[-3000:]


@pytest.mark.parametrize("which", ["cert", "key"])
def test_a_front_certificate_or_key_that_is_a_fifo_stops_serve_naming_it(tmp_path: Path, which: str) -> None:
    # (the other file need not be valid: the FIFO is refused before either is read)
    files = {"cert": str(tmp_path / "cert.pem"), "key": str(tmp_path / "key.pem")}
    for name in files.values():
        Path(name).write_text("-----BEGIN X-----\n-----END X-----\n")
        os.chmod(name, 0o600)
    files[which] = _fifo(tmp_path, f"{which}-fifo.pem")
    config = {"mcpServers": {}, "sentinel": {"data_dir": str(tmp_path / "d"), "http": {"tls": files}}}
    run = _run(tmp_path, config, "serve", "--http", str(free_port()))
    assert run.returncode != 0, run.stderr[-3000:]
    assert "not a regular file" in run.stderr and files[which] in run.stderr, run.stderr[-3000:]
