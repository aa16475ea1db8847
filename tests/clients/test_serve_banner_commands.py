"""The commands ``sentinel-mcp serve --http`` prints work when pasted as they are. Served on every address
(``0.0.0.0``, ``::``, as README's TLS set-up and the container do) the banner printed the bind address as the
URL to use: ``call --url https://0.0.0.0:PORT/mcp`` then failed TLS verification (the certificate names this
machine's addresses, never 0.0.0.0), and ``::`` gave ``https://:::PORT``, no URL at all."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ..conftest import ROOT, free_port, stop_process

pytestmark = pytest.mark.timeout(240)


def _banner(log: Path, proc: subprocess.Popen, marker: str = "Try a governed call:") -> str:
    deadline = time.monotonic() + 150
    while time.monotonic() < deadline:
        text = log.read_text()
        if marker in text and "web console" in text:
            time.sleep(0.5)  # the banner's lines after it
            return log.read_text()
        assert proc.poll() is None, text
        time.sleep(0.3)
    raise AssertionError(log.read_text())


@pytest.mark.parametrize("bind", ["0.0.0.0", "::"])
def test_the_printed_call_command_reaches_the_gateway_over_tls(tmp_path: Path, bind: str) -> None:
    config = tmp_path / "sentinel.json"
    config.write_text(json.dumps({
        "mcpServers": {"airline": {"command": sys.executable, "args": ["-m", "examples.airline"]}},
        "sentinel": {"rulebases": ["shipped:rulebases/default.pl", "shipped:rulebases/airline.pl"],
                     "seeds": {"current_user": "mia_li_3668", "today": "2024-05-15"}, "builtins": []},
    }))
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "SENTINEL_DATA_DIR": str(tmp_path / "d"),
           "PYTHONPATH": str(ROOT)}
    env.pop("SENTINEL_TOKEN", None)
    port = free_port()
    log = tmp_path / "serve.log"
    host = f"[{bind}]" if ":" in bind else bind
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "sentinel_mcp", "-c", str(config), "serve", "--http",
                                 f"{host}:{port}", "--tls-local"], stdout=out, stderr=subprocess.STDOUT,
                                env=env, cwd=tmp_path, stdin=subprocess.DEVNULL)
    try:
        banner = _banner(log, proc)
        (line,) = [ln for ln in banner.splitlines() if ln.startswith("Try a governed call:")]
        argv = shlex.split(line.partition(":")[2])
        assert "0.0.0.0" not in line and ":::" not in line, line
        url = argv[argv.index("--url") + 1]
        assert url.startswith("https://") and f":{port}/mcp" in url, line
        for shown in [ln for ln in banner.splitlines() if "https://" in ln]:
            assert "0.0.0.0" not in shown and "://::" not in shown, shown
        # as the user pastes it (the printed program, this checkout's code): the question is asked, so the
        # connection, the certificate and the owner's token all worked
        run = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(config), *argv[1:]], input="",
                             capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
        assert "Why do you want to cancel reservation NO6JO3?" in run.stderr, (run.stdout, run.stderr)
        assert "ConnectError" not in run.stderr and "CERTIFICATE_VERIFY_FAILED" not in run.stderr, run.stderr
    finally:
        stop_process(proc)


def test_the_printed_call_command_over_knowing_plaintext_says_so(tmp_path: Path) -> None:
    """Served beyond loopback with ``"tls": "off"``, the printed command carries ``--plaintext`` (``call``
    refuses an http:// URL beyond loopback without it: red team "tls10"), and works pasted as it is."""
    from sentinel_mcp.tls.authority import machine_addresses

    lan = next((a for a in machine_addresses() if "." in a and not a.startswith("127.")), None)
    if lan is None:
        pytest.skip("no address beyond loopback on this machine")
    config = tmp_path / "sentinel.json"
    config.write_text(json.dumps({
        "mcpServers": {"airline": {"command": sys.executable, "args": ["-m", "examples.airline"]}},
        "sentinel": {"rulebases": ["shipped:rulebases/default.pl", "shipped:rulebases/airline.pl"],
                     "seeds": {"current_user": "mia_li_3668", "today": "2024-05-15"}, "builtins": [],
                     "http": {"tls": "off"}},
    }))
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "SENTINEL_DATA_DIR": str(tmp_path / "d"),
           "PYTHONPATH": str(ROOT)}
    env.pop("SENTINEL_TOKEN", None)
    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "sentinel_mcp", "-c", str(config), "serve", "--http",
                                 f"{lan}:{port}"], stdout=out, stderr=subprocess.STDOUT, env=env,
                                cwd=tmp_path, stdin=subprocess.DEVNULL)
    try:
        banner = _banner(log, proc)
        (line,) = [ln for ln in banner.splitlines() if ln.startswith("Try a governed call:")]
        argv = shlex.split(line.partition(":")[2])
        assert argv[argv.index("--url") + 1] == f"http://{lan}:{port}/mcp" and "--plaintext" in argv, line
        run = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(config), *argv[1:]], input="",
                             capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
        assert "Why do you want to cancel reservation NO6JO3?" in run.stderr, (run.stdout, run.stderr)
    finally:
        stop_process(proc)
