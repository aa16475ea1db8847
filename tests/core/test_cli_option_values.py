"""An option of one value given as ``--option=--`` is a usage error naming the option: Python's argparse read
the ``--`` as the end of options and handed the command an empty list, past the option's type check
(``audit --tail=--`` reached the store's code as ``[]``: a TypeError traceback; a string option became a
list)."""

from __future__ import annotations

import pytest

from sentinel_mcp.cli import main


@pytest.mark.parametrize(("command", "option"), [
    (["audit", "--tail=--"], "--tail"),
    (["audit", "--session=--"], "--session"),
    (["consent", "grant", "p1", "messages", "--expires-in=--"], "--expires-in"),
    (["consent", "list", "--principal=--"], "--principal"),
    (["swarm", "list", "--limit=--"], "--limit"),
    (["a2a", "discover", "--interface=--"], "--interface"),
    (["pins", "accept", "x", "--digest=--"], "--digest"),
    (["--config=--", "audit"], "--config"),
])
def test_an_option_given_the_end_of_options_as_its_value_is_a_usage_error(
        monkeypatch, tmp_path, capsys, command, option):
    monkeypatch.setenv("SENTINEL_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("SENTINEL_CONFIG", raising=False)
    with pytest.raises(SystemExit) as done:
        main(command)
    err = capsys.readouterr().err
    assert done.value.code == 2, err
    assert "Traceback" not in err and option in err.strip().splitlines()[-1], err
