"""Two principals whose names read as one ("alice" and "Alice", "alice" and "a1ice"), or a principal named as
a reserved one in other letters ("Owner", "ANONYMOUS"), are refused at load, naming the file and the line: a
person reading the audit, the console or an approval takes one for the other, and a policy rule written for
``alice`` misses ``Alice``. Before, only the very same spelling twice was refused. The same holds across the
config's ways of naming a principal: an A2A key's name beside a configured principal's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sentinel_mcp.config import ConfigError, load_config

TOKENS = iter(f"principal-token-{i:04d}-0123456789" for i in range(1000))


def _write(tmp_path: Path, principals: list[str], a2a_keys: list[str] = ()) -> Path:
    cfg = tmp_path / "sentinel.json"
    sentinel: dict = {"data_dir": str(tmp_path / "state"),
                      "principals": [{"name": n, "token": next(TOKENS)} for n in principals]}
    if a2a_keys:
        sentinel["a2a"] = {"task_db": "", "api_keys": {n: next(TOKENS) for n in a2a_keys}}
    # one member a line, so the error's line names the second principal's entry
    cfg.write_text(json.dumps({"mcpServers": {}, "sentinel": sentinel}, indent=1))
    cfg.chmod(0o600)
    return cfg


def _line_of(cfg: Path, name: str) -> int:
    return next(i for i, line in enumerate(cfg.read_text().splitlines(), 1) if f'"name": "{name}"' in line)


@pytest.mark.parametrize("first, second", [
    ("alice", "Alice"), ("bob", "BOB"), ("alice", "a1ice"), ("bob", "b0b"), ("m.x", "rn.x"),
])
def test_two_principals_whose_names_read_as_one_are_refused_naming_the_line(tmp_path, first, second) -> None:
    cfg = _write(tmp_path, ["carol", first, second])
    with pytest.raises(ConfigError) as e:
        load_config(cfg)
    said = str(e.value)
    assert str(cfg) in said and repr(first) in said and repr(second) in said, said
    assert f"(line {_line_of(cfg, second)})" in said, said


@pytest.mark.parametrize("name", ["Owner", "OWNER", "Anonymous", "Sentinel", "LOCAL", "0wner"])
def test_a_principal_named_as_a_reserved_one_in_other_letters_is_refused(tmp_path, name) -> None:
    cfg = _write(tmp_path, [name])
    with pytest.raises(ConfigError) as e:
        load_config(cfg)
    assert "reserved" in str(e.value) and f"(line {_line_of(cfg, name)})" in str(e.value), str(e.value)


def test_an_a2a_key_named_as_a_principal_in_other_letters_is_refused(tmp_path) -> None:
    cfg = _write(tmp_path, ["alice"], a2a_keys=["ALICE"])
    with pytest.raises(ConfigError, match="read as one") as e:
        load_config(cfg)
    assert str(cfg) in str(e.value)


def test_names_that_differ_and_the_same_name_as_an_a2a_key_load(tmp_path) -> None:
    cfg = _write(tmp_path, ["alice", "bob", "alice.bot", "bob-2"], a2a_keys=["alice", "peer"])
    names = [p.name for p in load_config(cfg).sentinel.principals]
    assert names == ["alice", "bob", "alice.bot", "bob-2"]
