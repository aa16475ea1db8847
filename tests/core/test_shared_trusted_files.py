"""Files a config makes Sentinel trust are refused when another account could change them (red team
"perms12"), as OpenSSH's StrictModes does: the config, its rulebases, an ``envFile``, the A2A key files.
Before, a world-writable rulebase (or the folder holding it) let any local user rewrite the policy, and a
config owned by another account let that account pick the servers Sentinel starts.

The rule is the TLS files' (``tls/file_modes.replaceable_by_others``): the file and every directory up to
``/`` owned by root or this account, written by nobody else (a private group, and a sticky ``/tmp``, are
fine). The deployer's opt-out (``SENTINEL_SHARED_FILES=trust``) keeps such a file, named in the config's
warnings (``/healthz``'s problems, ``config show``) - never silently. The tests run as root, so another
account's file is made with ``chown``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.config import load_config
from sentinel_mcp.core.errors import ConfigError

RULES = ":- module(extra, []).\n"
OTHER_UID = 54321  # an account that is neither root nor this one


@pytest.fixture
def conf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("SENTINEL_SHARED_FILES", raising=False)
    d = tmp_path / "conf"
    d.mkdir(mode=0o755)
    return d


def _write(conf: Path, sentinel: dict[str, Any] | None = None, servers: dict[str, Any] | None = None) -> Path:
    cfg = conf / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": servers or {},
                               "sentinel": {"builtins": [], **(sentinel or {})}}))
    os.chmod(cfg, 0o644)  # umask 022's mode: fine
    return cfg


def _rulebase(conf: Path, name: str = "extra.pl") -> Path:
    rb = conf / name
    rb.write_text(RULES)
    os.chmod(rb, 0o644)
    return rb


def test_ordinary_files_are_loaded(conf: Path) -> None:
    """pytest's own tmp_path (0700/0755 folders, umask 022 files, under the sticky /tmp): accepted."""
    _rulebase(conf)
    cfg = load_config(_write(conf, {"rulebases": ["extra.pl"]}))
    assert not [w for w in cfg.warnings if "another account" in w]


@pytest.mark.parametrize("mode", [0o666, 0o646, 0o664, 0o622, 0o602, 0o777])
def test_a_rulebase_others_may_write_is_refused(conf: Path, mode: int) -> None:
    rb = _rulebase(conf)
    os.chmod(rb, mode)
    if mode & 0o020 and not mode & 0o002:
        os.chown(rb, -1, OTHER_UID)  # group write by another group than this account's own
    with pytest.raises(ConfigError) as e:
        load_config(_write(conf, {"rulebases": ["extra.pl"]}))
    assert str(rb) in str(e.value) and "chmod" in str(e.value) and "rulebases[0]" in str(e.value)


def test_a_private_group_may_write(conf: Path) -> None:
    """umask 002 with a private group (the group is this account's own): as ssh, not refused."""
    rb = _rulebase(conf)
    os.chmod(rb, 0o664)
    os.chown(rb, -1, os.getegid())
    load_config(_write(conf, {"rulebases": ["extra.pl"]}))


@pytest.mark.parametrize("what", ["rulebase", "config", "folder"])
def test_another_accounts_file_or_folder_is_refused(conf: Path, what: str) -> None:
    rb = _rulebase(conf)
    cfg = _write(conf, {"rulebases": ["extra.pl"]})
    target = {"rulebase": rb, "config": cfg, "folder": conf}[what]
    os.chown(target, OTHER_UID, -1)
    with pytest.raises(ConfigError) as e:
        load_config(cfg)
    assert "uid 54321" in str(e.value) and "chown" in str(e.value)


def test_a_folder_others_may_write_is_refused(conf: Path) -> None:
    """The file's own mode is fine, but whoever writes its folder can replace it."""
    _rulebase(conf)
    cfg = _write(conf, {"rulebases": ["extra.pl"]})
    os.chmod(conf, 0o777)
    with pytest.raises(ConfigError) as e:
        load_config(cfg)
    assert str(conf) in str(e.value) and "go-w" in str(e.value)
    os.chmod(conf, 0o1777)  # sticky (as /tmp): others cannot rename what they do not own
    load_config(cfg)


def test_a_folder_higher_up_owned_by_another_account_is_refused(conf: Path) -> None:
    deep = conf / "a" / "b"
    deep.mkdir(parents=True)
    _rulebase(deep)
    cfg = _write(conf, {"rulebases": ["a/b/extra.pl"]})
    os.chown(conf / "a", OTHER_UID, -1)
    with pytest.raises(ConfigError) as e:
        load_config(cfg)
    assert str(conf / "a") in str(e.value)


def test_the_config_file_others_may_write_is_refused(conf: Path) -> None:
    cfg = _write(conf)
    os.chmod(cfg, 0o666)
    with pytest.raises(ConfigError) as e:
        load_config(cfg)
    assert "config file" in str(e.value) and str(cfg) in str(e.value)


def test_an_env_file_others_may_write_is_refused(conf: Path) -> None:
    env = conf / "up.env"
    env.write_text("A=1\n")
    os.chmod(env, 0o622)
    with pytest.raises(ConfigError) as e:
        load_config(_write(conf, servers={"up": {"command": "true", "envFile": "up.env"}}))
    assert "envFile" in str(e.value) and str(env) in str(e.value)


def test_an_a2a_key_file_others_may_write_is_refused(conf: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = conf / "peer.pem"
    key.write_bytes(ec.generate_private_key(ec.SECP256R1()).public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    os.chmod(key, 0o666)
    with pytest.raises(ConfigError) as e:
        load_config(_write(conf, {"a2a": {"peer_keys": {"bob": "peer.pem"}}}))
    assert "peer_keys.bob" in str(e.value) and str(key) in str(e.value)


def test_a_link_to_a_shared_rulebase_is_refused(conf: Path, tmp_path: Path) -> None:
    """The file read is judged, and the folder of the link as well as the target's."""
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    target = _rulebase(shared)
    os.chmod(target, 0o666)
    (conf / "extra.pl").symlink_to(target)
    with pytest.raises(ConfigError):
        load_config(_write(conf, {"rulebases": ["extra.pl"]}))


@pytest.mark.parametrize("value", ["", "1", "yes", "TRUST", "trust "])
def test_only_the_exact_opt_out_keeps_a_shared_file(conf: Path, monkeypatch: pytest.MonkeyPatch,
                                                    value: str) -> None:
    monkeypatch.setenv("SENTINEL_SHARED_FILES", value)
    rb = _rulebase(conf)
    os.chmod(rb, 0o666)
    with pytest.raises(ConfigError):
        load_config(_write(conf, {"rulebases": ["extra.pl"]}))


def test_the_opt_out_is_loud(conf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A container's bind mount owned by the host's account: kept by the deployer's word, and named."""
    monkeypatch.setenv("SENTINEL_SHARED_FILES", "trust")
    rb = _rulebase(conf)
    cfg = _write(conf, {"rulebases": ["extra.pl"]})
    os.chown(rb, OTHER_UID, -1)
    os.chown(cfg, OTHER_UID, -1)
    loaded = load_config(cfg)
    named = [w for w in loaded.warnings if "another account could change it" in w]
    assert len(named) == 2 and any(str(rb) in w for w in named) and any(str(cfg) in w for w in named)


def test_config_show_names_a_kept_shared_file(conf: Path) -> None:
    rb = _rulebase(conf)
    cfg = _write(conf, {"rulebases": ["extra.pl"], "data_dir": str(conf / "data")})
    os.chown(rb, OTHER_UID, -1)
    env = {**os.environ, "SENTINEL_SHARED_FILES": "trust"}
    out = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "config", "show"],
                         capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    problems = json.loads(out.stdout)["problems"]
    assert len(problems) == 1 and str(rb) in problems[0] and "SENTINEL_SHARED_FILES" in problems[0]
    assert str(rb) in out.stderr
    env.pop("SENTINEL_SHARED_FILES")
    refused = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "config", "show"],
                             capture_output=True, text=True, timeout=60, env=env)
    assert refused.returncode != 0 and str(rb) in refused.stderr and not refused.stdout


def test_a_linked_config_reads_relative_paths_from_the_targets_folder(conf: Path, tmp_path: Path) -> None:
    """Decided (docs/configuration.md): a config reached by a symbolic link is the file it names, and its
    relative paths are that file's folder's (where its rulebases and envFiles are kept beside it), not the
    link's. Both folders are held to the rule above."""
    real = conf
    _rulebase(real)
    cfg = _write(real, {"rulebases": ["extra.pl"]})
    links = tmp_path / "links"
    links.mkdir(mode=0o755)
    _rulebase(links).write_text(":- module(decoy, []).\n")  # same name beside the link: never read
    (links / "sentinel.json").symlink_to(cfg)
    loaded = load_config(links / "sentinel.json")
    assert loaded.rulebase_paths() == [real / "extra.pl"]
    os.chmod(links, 0o777)  # whoever writes the link's folder may point the link elsewhere: refused
    with pytest.raises(ConfigError) as e:
        load_config(links / "sentinel.json")
    assert str(links) in str(e.value)


def test_a_folder_higher_up_others_may_write_is_refused(conf: Path) -> None:
    """Whoever writes a grandparent can rename the rulebase's folder away and put their own in its place
    (this held only the file's own folder to the write rule, and the higher ones to the owner rule)."""
    deep = conf / "a" / "b"
    deep.mkdir(parents=True)
    _rulebase(deep)
    cfg = _write(conf, {"rulebases": ["a/b/extra.pl"]})
    os.chmod(conf / "a", 0o777)
    with pytest.raises(ConfigError) as e:
        load_config(cfg)
    assert str(conf / "a") in str(e.value) and "go-w" in str(e.value)
    os.chmod(conf / "a", 0o1777)
    load_config(cfg)
