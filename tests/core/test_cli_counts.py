"""A count on the command line (``audit --tail``, ``swarm list --limit``, ``sensors audit --limit``) is a
whole number from 1 to a billion, or a one-line usage error: 26 digits reached SQLite and ended in an
OverflowError traceback, and -1 meant "no limit" to SQLite."""

from __future__ import annotations

import pytest

from sentinel_mcp.cli import main


@pytest.mark.parametrize("value", ["99999999999999999999999999", "-1", "0", "1.5", "x"])
@pytest.mark.parametrize("command", [["audit", "--tail"], ["swarm", "list", "--limit"],
                                     ["sensors", "audit", "--limit"]])
def test_a_count_out_of_range_is_a_usage_error(monkeypatch, tmp_path, capsys, command, value):
    monkeypatch.setenv("SENTINEL_DATA_DIR", str(tmp_path))
    with pytest.raises(SystemExit) as done:
        main([*command, value])
    assert done.value.code == 2
    assert command[-1] in capsys.readouterr().err.strip().splitlines()[-1]


@pytest.mark.parametrize("command", [["audit", "--tail"], ["swarm", "list", "--limit"],
                                     ["sensors", "audit", "--limit"]])
def test_a_count_in_range_runs(monkeypatch, tmp_path, capsys, command):
    monkeypatch.setenv("SENTINEL_DATA_DIR", str(tmp_path))
    assert main([*command, "5"]) in (0, 1)
    assert "Traceback" not in capsys.readouterr().err
