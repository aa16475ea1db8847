"""``clause_problems`` looked at a rulebase file by ``stat`` and read it by a second open: a FIFO put at the
name (after the loader's ``is_file`` or instead of the file) passed the size check at 0 bytes and its read
waited for a writer for ever, holding the load (or the hot reload) in its thread. One open now: a FIFO is
refused as not a regular file, a file past the bound by its size, each naming nothing more than the bound."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sentinel_mcp.policy.clause_bounds import MAX_FILE_BYTES, clause_problems

pytestmark = pytest.mark.timeout(60)  # the hole held the read for ever: the timeout is the failure


def test_a_fifo_is_not_a_regular_file_not_a_wait_for_a_writer(tmp_path):
    fifo = tmp_path / "rules.pl"
    os.mkfifo(fifo)
    assert clause_problems(fifo) == [(0, "not a regular file (a FIFO, device or directory)")]


def test_a_device_is_not_read_without_end():
    assert clause_problems(Path("/dev/zero")) == [
        (0, "not a regular file (a FIFO, device or directory)")
    ]


def test_a_file_past_the_bound_is_its_size_and_a_small_one_reads(tmp_path):
    huge = tmp_path / "huge.pl"
    with open(huge, "wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)
    assert clause_problems(huge) == [
        (0, f"the file is {MAX_FILE_BYTES + 1:,} bytes, more than {MAX_FILE_BYTES:,}")
    ]
    ok = tmp_path / "ok.pl"
    ok.write_text("fact(a/1).\n")
    assert clause_problems(ok) == []
    assert clause_problems(tmp_path / "missing.pl") == []  # the loader names a missing file
