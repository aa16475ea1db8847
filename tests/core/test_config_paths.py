"""Paths in a config resolve against one base: absolute, or the config file's folder. A shipped rulebase is
named `shipped:rulebases/NAME.pl`; a configured file that is missing is reported missing (and every call is
denied), never replaced by a shipped file of the same name (a deleted, tightened copy of airline.pl used to
give way to the looser shipped one, silently)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sentinel_mcp.config import load_config
from sentinel_mcp.paths import RULEBASES_DIR, SHIPPED_ROOT
from sentinel_mcp.policy.engine import shared_engine
from sentinel_mcp.policy.rulebase import RulebaseError, load_rulebase

pytestmark = pytest.mark.timeout(90)


def config(tmp_path: Path, **sentinel: object) -> Path:
    cfg = tmp_path / "conf" / "sentinel.json"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(json.dumps({"mcpServers": {}, "sentinel": {"builtins": [], **sentinel}}))
    return cfg


def test_shipped_rulebases_are_named_as_such(tmp_path):
    named = ["shipped:rulebases/default.pl", "shipped:rulebases/airline.pl"]
    c = load_config(config(tmp_path, rulebases=named))
    assert c.rulebase_paths() == [RULEBASES_DIR / "default.pl", RULEBASES_DIR / "airline.pl"]


@pytest.mark.parametrize("spelling", ["rulebases/airline.pl", "./rulebases/airline.pl", "airline.pl"])
async def test_a_missing_config_relative_rulebase_is_missing_not_the_shipped_one(tmp_path, spelling):
    c = load_config(config(tmp_path, rulebases=[spelling]))
    [path] = c.rulebase_paths()
    assert path == (tmp_path / "conf" / spelling).resolve() and not path.exists()
    with pytest.raises(RulebaseError) as refused:
        await load_rulebase(shared_engine(), [path])
    [problem] = refused.value.problems
    assert problem.file == str(path) and "file not found" in problem.message
    assert "shipped:rulebases/airline.pl" in problem.message  # how to name the shipped one, if that was meant


async def test_the_tightened_copy_is_the_one_loaded_while_it_exists(tmp_path):
    copy = tmp_path / "conf" / "rulebases" / "airline.pl"
    copy.parent.mkdir(parents=True)
    copy.write_text((RULEBASES_DIR / "airline.pl").read_text() + "\nguard(rec__do, [], fail).\n")
    c = load_config(config(tmp_path, rulebases=["rulebases/airline.pl"]))
    assert c.rulebase_paths() == [copy]
    copy.unlink()
    assert c.rulebase_paths() == [copy]  # still the copy's path: missing, never the shipped file


@pytest.mark.parametrize("key", ["data_dir", "store"])
def test_data_paths_never_fall_back_to_the_shipped_tree(tmp_path, key):
    assert (SHIPPED_ROOT / "rulebases").is_dir()
    c = load_config(config(tmp_path, **{key: "rulebases"}))
    resolved = c.data_dir if key == "data_dir" else c.store_path
    assert resolved == (tmp_path / "conf" / "rulebases").resolve()


def test_a_servers_relative_cwd_is_the_config_files_folder(tmp_path, monkeypatch):
    """``cwd`` of a stdio server, like every other path in a config, is relative to the config file's folder:
    the same config started from another directory runs its server in the same place."""
    cfg = tmp_path / "conf" / "sentinel.json"
    cfg.parent.mkdir(parents=True)
    cfg.write_text(json.dumps({"mcpServers": {"a": {"command": "x", "cwd": "servers/a"},
                                              "b": {"command": "x", "cwd": "/abs/b"}}}))
    monkeypatch.chdir(tmp_path)
    c = load_config(cfg)
    assert c.mcp_servers["a"].cwd == str(tmp_path / "conf" / "servers" / "a")
    assert c.mcp_servers["b"].cwd == "/abs/b"
