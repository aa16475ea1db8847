"""A stdio client that stops reading the gateway's stdout (hung, busy or hostile): the gateway neither freezes
nor takes requests without bound, and answers everything once the client reads again
(``gateway/stdio_wire_out.py``)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

import pytest

from tests.conftest import stop_process

pytestmark = pytest.mark.timeout(120)

PINGS = 10_000  # their answers (~0.4 MB): far past a pipe's 64 KiB and the bound on unwritten lines
PAD = {"_meta": {"pad": "p" * 1000}}  # each request ~1 KB: the pipe and the reader's buffer hold few


def _serve(tmp: Path) -> subprocess.Popen[bytes]:
    cfg = tmp / "sentinel.json"
    sentinel = {"data_dir": str(tmp / "state"), "builtins": []}
    cfg.write_text(json.dumps({"mcpServers": {}, "sentinel": sentinel}))
    proc = subprocess.Popen([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    assert proc.stdin is not None and proc.stdout is not None
    _send(proc.stdin, {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    assert json.loads(proc.stdout.readline())["id"] == "init"
    _send(proc.stdin, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return proc


def _send(pipe: IO[bytes], message: Any) -> None:
    pipe.write(json.dumps(message).encode() + b"\n")
    pipe.flush()


class _Flood:
    """Writes PINGS pings from a thread, never reading; ``sent`` says how many the gateway has taken so far
    (a write blocks once the gateway stops reading)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.sent = 0
        self.thread = threading.Thread(target=self._run, args=(proc.stdin,), daemon=True)
        self.thread.start()

    def _run(self, pipe: IO[bytes]) -> None:
        try:
            for i in range(PINGS):
                ping = {"jsonrpc": "2.0", "id": i, "method": "ping", "params": PAD}
                pipe.write(json.dumps(ping).encode() + b"\n")
                self.sent = i + 1
            pipe.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass

    def settled(self, quiet: float = 2.0, bound: float = 60.0) -> int:
        """How many were written once no more are taken for ``quiet`` seconds (or all were)."""
        deadline = time.monotonic() + bound
        last, since = -1, time.monotonic()
        while time.monotonic() < deadline and self.thread.is_alive():
            if self.sent != last:
                last, since = self.sent, time.monotonic()
            elif time.monotonic() - since > quiet:
                break
            time.sleep(0.1)
        return self.sent


def test_a_client_that_stops_reading_does_not_stop_a_shutdown(tmp_path: Path) -> None:
    proc = _serve(tmp_path)
    try:
        flood = _Flood(proc)
        assert flood.settled() < PINGS  # the gateway's answers wait in the pipe, unread
        proc.send_signal(signal.SIGTERM)
        # the event loop was held in a blocking write to the full pipe: SIGTERM was never handled
        proc.wait(30)
    finally:
        stop_process(proc, signal.SIGKILL)


def test_requests_wait_while_answers_wait_unread_and_all_are_answered_once_read(tmp_path: Path) -> None:
    proc = _serve(tmp_path)
    assert proc.stdout is not None and proc.stdin is not None
    try:
        flood = _Flood(proc)
        # bounded: the pipes' buffers and the gateway's bound on lines waiting to be written, not all of them
        assert flood.settled() < PINGS // 2
        answered: set[Any] = set()
        while len(answered) < PINGS:
            answer = json.loads(proc.stdout.readline())
            assert answer.get("result") == {}, answer
            answered.add(answer["id"])
        assert answered == set(range(PINGS))
        flood.thread.join(30)
        _send(proc.stdin, {"jsonrpc": "2.0", "id": "after", "method": "tools/list"})
        assert json.loads(proc.stdout.readline())["result"] == {"tools": []}
    finally:
        stop_process(proc)
