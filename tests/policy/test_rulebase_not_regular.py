"""A configured rulebase that is a FIFO or a device: the load is refused naming it ("not a regular file"),
and reporting that refusal never reads it (the version digest of the failed set read a FIFO, waiting for a
writer forever: ``sentinel-mcp serve`` or ``call`` hung at start-up without a word)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sentinel_mcp.policy.rulebase import content_digest

pytestmark = pytest.mark.timeout(90)


def test_the_digest_never_reads_a_fifo_or_a_device(tmp_path):
    fifo = tmp_path / "policy.pl"
    os.mkfifo(fifo)
    regular = tmp_path / "ok.pl"
    regular.write_text("a(1).\n")
    digests = {content_digest([fifo, regular]), content_digest([Path("/dev/zero"), regular])}
    assert len(digests) == 2  # each names what it found, so the two differ


def test_a_fifo_rulebase_is_refused_at_start_up_not_waited_on(tmp_path):
    fifo = tmp_path / "policy.pl"
    os.mkfifo(fifo)
    cfg = tmp_path / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {}, "sentinel": {
        "builtins": ["sentinel"], "rulebases": ["policy.pl"], "data_dir": str(tmp_path / "state")}}))
    done = subprocess.run(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "call", "sentinel__sentinel_facts", "{}"],
        capture_output=True, text=True, timeout=80, stdin=subprocess.DEVNULL,
    )
    assert "not a regular file" in done.stdout + done.stderr, (done.stdout + done.stderr)[-2000:]
