"""``tls init --days`` and ``tls issue --days``: a validity that is not a positive finite number of days
within the CA's own is refused by the command line, with one line and before anything is written (a NaN,
negative or huge one ended in a traceback after the CA had been made)."""

from __future__ import annotations

import pytest

from sentinel_mcp.cli import main


@pytest.mark.parametrize("days", ["nan", "inf", "-1", "0", "1e308", "36500", "x"])
@pytest.mark.parametrize("command", [["tls", "init"], ["tls", "issue", "bob"]])
def test_a_bad_validity_is_one_line_and_writes_nothing(tmp_path, monkeypatch, capsys, command, days):
    monkeypatch.setenv("SENTINEL_DATA_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("SENTINEL_CONFIG", raising=False)
    with pytest.raises(SystemExit) as done:
        main([*command, "--days", days])
    assert done.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "--days" in err[-1] and "Traceback" not in "\n".join(err), err
    assert not (tmp_path / "state" / "tls").exists()


def test_a_good_validity_still_issues(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SENTINEL_DATA_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("SENTINEL_CONFIG", raising=False)
    assert main(["tls", "init", "--days", "30"]) == 0
    assert (tmp_path / "state" / "tls" / "server.pem").exists()
