"""``a2a discover``: an interface that is not an IP address (on the command line or in
sentinel.a2a.interfaces) and a browse time that is not a positive finite number of seconds are one line
and exit 2 (an interface such as "eth0" ended in a traceback from the mDNS library; "nan" seconds browsed
for nothing)."""

from __future__ import annotations

import json

import pytest

from sentinel_mcp.cli import main
from sentinel_mcp.config import ConfigError, parse_config


@pytest.mark.parametrize("extra", [["--interface", "eth0"], ["--interface", "../../etc"],
                                   ["--interface", ""], ["--timeout", "nan"], ["--timeout", "0"],
                                   ["--timeout", "inf"], ["--timeout", "1e9"]])
def test_bad_discover_arguments_are_a_usage_error(monkeypatch, tmp_path, capsys, extra):
    monkeypatch.setenv("SENTINEL_DATA_DIR", str(tmp_path))
    with pytest.raises(SystemExit) as done:
        main(["a2a", "discover", *extra])
    assert done.value.code == 2
    assert extra[0] in capsys.readouterr().err.strip().splitlines()[-1]


def test_a_configured_interface_that_is_not_an_address_stops_the_load(tmp_path, capsys):
    with pytest.raises(ConfigError) as err:
        parse_config({"sentinel": {"builtins": ["a2a"], "a2a": {"interfaces": ["eth0"]}}}, source="c.json")
    assert "sentinel.a2a.interfaces" in str(err.value), str(err.value)
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"sentinel": {"builtins": ["a2a"], "a2a": {"interfaces": ["eth0"]}}}))
    assert main(["-c", str(cfg), "a2a", "discover"]) == 2
    assert "sentinel.a2a.interfaces" in capsys.readouterr().err
