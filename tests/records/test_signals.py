"""SIGTERM and SIGINT end `serve` promptly on every front, and leave no process behind."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .rig import ROOT, kill_tree, start_http, tree, wait_gone, write_config

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


def wait_family(pid: int, size: int, timeout: float = 60) -> set[int]:
    """The gateway's process tree once its upstream (reaper, server, grandchild) is up."""
    deadline = time.monotonic() + timeout
    family = tree(pid)
    while len(family) < size and time.monotonic() < deadline:
        time.sleep(0.1)
        family = tree(pid)
    assert len(family) >= size, family
    return family


def stopped_within(proc: subprocess.Popen, sig: int, timeout: float = 20) -> float:
    started = time.monotonic()
    proc.send_signal(sig)
    proc.wait(timeout)
    return time.monotonic() - started


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_stdio_serve_stops_on_a_signal_while_stdin_is_open(tmp_path: Path, sig: int) -> None:
    config = write_config(tmp_path, grandchild=True)
    proc = subprocess.Popen(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(config), "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
        start_new_session=True,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write((json.dumps(INIT) + "\n").encode())
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 1
        family = wait_family(proc.pid, 4)
        stopped_within(proc, sig)  # stdin stays open: the signal alone ends it
        assert wait_gone(family) == set()
    finally:
        kill_tree(proc)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_http_serve_stops_on_a_signal(tmp_path: Path, sig: int) -> None:
    proc, _ = start_http(write_config(tmp_path, grandchild=True))
    try:
        family = wait_family(proc.pid, 4)
        stopped_within(proc, sig)
        assert wait_gone(family) == set()
    finally:
        kill_tree(proc)


@pytest.mark.parametrize("stdin", ["devnull", "file"])
def test_stdio_serve_reads_a_stdin_it_cannot_poll_and_stops_at_its_end(tmp_path: Path, stdin: str) -> None:
    """``serve < /dev/null`` and ``serve < messages.jsonl``: epoll refuses both (a character device that is
    not a terminal, a regular file); the gateway reads them without it, answers each line, and ends at EOF
    instead of logging the loop's refusal and waiting for ever."""
    config = write_config(tmp_path)
    source = Path("/dev/null")
    if stdin == "file":
        source = tmp_path / "messages.jsonl"
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        source.write_text("\n".join([json.dumps(INIT), json.dumps(ping), "not json {"]) + "\n")
    with source.open("rb") as src:
        proc = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(config), "serve"], stdin=src,
                              capture_output=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    assert b"Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert b"Operation not permitted" not in proc.stderr, proc.stderr[-2000:]
    answers = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    if stdin == "devnull":
        assert answers == []
    else:
        by_id = {a.get("id"): a for a in answers}
        assert by_id[1]["result"]["serverInfo"]["name"]
        assert by_id[2]["result"] == {}
        assert by_id[None]["error"]["code"] == -32700
