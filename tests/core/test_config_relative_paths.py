"""Every path a config names is relative to the config file's folder, whatever the directory Sentinel was
started from (red team "config11"). The A2A key files (``card_signing_key``, ``peer_keys``, ``trusted_keys``),
the deprecated A2A TLS files, ``peer_tls``, the model files and ``termux_bin_dir`` were resolved against the
process's working directory: a gateway started from another directory read another file of the same name
(a key planted where it is started from: a card signed, or peers trusted, with that one), or none.

One rule for all of them (``config_file_paths.PATHS``), and every path-like setting of every section is in
that table or named with the rule it follows instead (a new one cannot be forgotten)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from sentinel_mcp.config import load_config
from sentinel_mcp.config_file_paths import OTHER_RULES, PATHS


def _private(path: Path) -> ec.EllipticCurvePrivateKey:
    key = ec.generate_private_key(ec.SECP256R1())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    os.chmod(path, 0o600)
    return key


def _public(path: Path) -> bytes:
    pem = _private(path.with_suffix(".key")).public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    path.write_bytes(pem)
    return pem


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(the config's folder, the directory Sentinel is started from): the same relative names in both."""
    conf, started = tmp_path / "conf", tmp_path / "started"
    conf.mkdir()
    started.mkdir()
    monkeypatch.chdir(started)
    return conf, started


def _load(conf: Path, sentinel: dict[str, Any]) -> Any:
    cfg = conf / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {}, "sentinel": {"builtins": [], **sentinel}}))
    os.chmod(cfg, 0o600)
    return load_config(cfg)


def test_a2a_key_files_are_the_config_folders(places: tuple[Path, Path]) -> None:
    from sentinel_mcp.a2a.card_signature import load_key
    from sentinel_mcp.a2a.settings import A2ASettings

    conf, started = places
    for root in (conf, started):  # the one where Sentinel is started from is a planted look-alike
        _private(root / "keys" / "sign.pem")
        _public(root / "keys" / "bob.pub")
        _public(root / "keys" / "ca.pub")
    section = {"card_signing_key": "keys/sign.pem", "peer_keys": {"bob": "keys/bob.pub"},
               "trusted_keys": ["keys/ca.pub", "./keys/../keys/ca.pub"]}
    cfg = _load(conf, {"a2a": section})
    a2a = A2ASettings.from_section(cfg.sentinel.model_extra["a2a"])
    assert a2a.card_signing_key == str(conf / "keys" / "sign.pem")
    assert a2a.peer_keys == {"bob": str(conf / "keys" / "bob.pub")}
    assert a2a.trusted_keys == [str(conf / "keys" / "ca.pub")] * 2
    mine = load_key((conf / "keys" / "bob.pub").read_text()).fingerprint
    assert load_key(a2a.peer_keys["bob"]).fingerprint == mine
    assert mine != load_key((started / "keys" / "bob.pub").read_text()).fingerprint


def test_a2a_key_files_load_when_started_elsewhere(places: tuple[Path, Path]) -> None:
    """Only the config's folder holds them: the config loads (it was refused, "cannot read the key file")."""
    conf, _ = places
    _private(conf / "keys" / "sign.pem")
    _public(conf / "keys" / "bob.pub")
    _load(conf, {"a2a": {"card_signing_key": "keys/sign.pem", "peer_keys": {"bob": "keys/bob.pub"},
                         "trusted_keys": ["keys/bob.pub"]}})


def test_key_texts_and_fingerprints_are_not_paths(places: tuple[Path, Path]) -> None:
    conf, _ = places
    pem = _public(conf / "k.pub").decode()
    digest = "sha256:" + "ab" * 32
    cfg = _load(conf, {"a2a": {"peer_keys": {"bob": pem, "carol": digest}, "trusted_keys": [pem, digest]}})
    section = cfg.sentinel.model_extra["a2a"]
    assert section["peer_keys"] == {"bob": pem, "carol": digest}
    assert section["trusted_keys"] == [pem, digest]


@pytest.mark.parametrize("where", [
    ("a2a", "tls_cert"), ("a2a", "tls_key"), ("a2a", "peer_ca_file"), ("a2a", "peer_tls", "ca"),
    ("a2a", "peer_tls", "cert"), ("a2a", "peer_tls", "key"), ("llm", "model"),
    ("swarm", "local", "model_path"), ("agent", "local", "model_path"), ("search", "embedding_model"),
    ("sensors", "termux_bin_dir"),
])
def test_each_section_path_is_the_config_folders(places: tuple[Path, Path], where: tuple[str, ...]) -> None:
    conf, _ = places
    (conf / "files").mkdir()
    (conf / "files" / "x.pem").write_text("")  # (the deprecated A2A TLS files are checked to exist)
    section: dict[str, Any] = {}
    inner = section
    for step in where[1:-1]:
        inner = inner.setdefault(step, {})
    inner[where[-1]] = "files/x.pem"
    partner = _PARTNERS.get(where[-1])
    if partner is not None:  # a key goes with its certificate
        inner[partner] = "files/x.pem"
    cfg = _load(conf, {where[0]: section})
    value: Any = cfg.sentinel.model_extra[where[0]]
    for step in where[1:]:
        value = value[step]
    assert value == str(conf / "files" / "x.pem")


_PARTNERS = {"tls_cert": "tls_key", "tls_key": "tls_cert", "key": "cert"}


@pytest.mark.parametrize("spelling", ["files/x.pem", "./files/x.pem", "files/../files/x.pem"])
def test_the_files_already_anchored_still_are(places: tuple[Path, Path], spelling: str) -> None:
    """The front's TLS files, a remote server's, a stdio server's cwd: the same rule."""
    conf, _ = places
    cfg = conf / "sentinel.json"
    cfg.write_text(json.dumps({
        "mcpServers": {"r": {"url": "https://example.test/mcp", "tls": {"ca": spelling}},
                       "s": {"command": "x", "cwd": spelling}},
        "sentinel": {"builtins": []}}))
    c = load_config(cfg)
    assert c.mcp_servers["r"].tls.ca == str(conf / "files" / "x.pem")
    assert c.mcp_servers["s"].cwd == str(conf / "files" / "x.pem")


def test_an_absolute_or_home_path_is_kept(places: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    conf, started = places
    monkeypatch.setenv("HOME", str(started))
    cfg = _load(conf, {"llm": {"model": "~/m.gguf"}, "sensors": {"termux_bin_dir": "/opt/termux/bin"}})
    assert cfg.sentinel.model_extra["llm"]["model"] == str(started / "m.gguf")
    assert cfg.sentinel.model_extra["sensors"]["termux_bin_dir"] == "/opt/termux/bin"


# a word of a setting's name that says it may name a file or a folder
_PATHLIKE = frozenset(("file", "dir", "path", "cert", "key", "keys", "ca", "crl", "model", "db", "cwd",
                       "store", "anchor", "rulebases"))


def _fields(model: Any, at: tuple[str, ...]) -> list[tuple[str, ...]]:
    from pydantic import BaseModel

    out = []
    for name, field in model.model_fields.items():
        out.append(at + (name,))
        for kind in (field.annotation, *getattr(field.annotation, "__args__", ())):
            if isinstance(kind, type) and issubclass(kind, BaseModel):
                out += _fields(kind, at + (name,))
    return out


def test_every_path_setting_is_in_the_table() -> None:
    """A setting whose name says it is a file, a folder or a key is in ``PATHS`` (anchored to the config's
    folder) or in ``OTHER_RULES`` (with the reason): a new one is not read from the working directory
    by oversight."""
    from sentinel_mcp.config import RemoteServer, SentinelSettings, StdioServer
    from sentinel_mcp.core.builtin import SECTION_MODELS, load_section_model

    found = _fields(SentinelSettings, ("sentinel",))
    for name in SECTION_MODELS:
        model = load_section_model(name)
        if model is not None:
            found += _fields(model, ("sentinel", name))
    found += _fields(StdioServer, ("mcpServers", "*")) + _fields(RemoteServer, ("mcpServers", "*"))
    listed = {p[:-1] if p[-1] in ("*", "[]") else p for p in PATHS} | set(OTHER_RULES)
    named = [f for f in found if _PATHLIKE & set(f[-1].split("_"))]
    missing = sorted(f for f in named if f not in listed)
    assert not missing, missing
