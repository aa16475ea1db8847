"""A peer's key file is read again each time a card is checked (``A2ASettings.card_keys``), and held each time
to the rule it was held to at load (``a2a/key_files.py``): a key file replaced while running by one another
account could change is not taken, the key read before stays in force, and the error says why. Before, the
check was made at load only: a renewed file left world-writable, or a link into another account's folder,
decided whom the A2A front trusted."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from sentinel_mcp.a2a.card_signature import fingerprint_of
from sentinel_mcp.a2a.key_files import SharedKeyFile
from sentinel_mcp.a2a.settings import A2ASettings

OTHER = 12345
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another account takes root")


def _pem() -> tuple[bytes, str]:
    public = ec.generate_private_key(ec.SECP256R1()).public_key()
    return (public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo),
            fingerprint_of(public))


@pytest.fixture
def keys(tmp_path: Path) -> Path:
    folder = tmp_path / "keys"
    folder.mkdir(mode=0o755)
    return folder


def _write(path: Path, pem: bytes, mode: int = 0o644) -> None:
    path.write_bytes(pem)
    path.chmod(mode)


def _pinned(settings: A2ASettings) -> str:
    return settings.card_keys.pinned["bob"].fingerprint


def _replace(path: Path, pem: bytes, mode: int) -> None:
    new = path.with_name("new.pem")
    _write(new, pem, mode)
    new.replace(path)  # as a renewal does: a new file renamed into place


def test_a_key_file_replaced_by_one_others_may_write_keeps_the_old_key(keys: Path, caplog) -> None:
    old, old_fp = _pem()
    new, new_fp = _pem()
    path = keys / "bob.pem"
    _write(path, old)
    settings = A2ASettings(peer_keys={"bob": str(path)})
    assert _pinned(settings) == old_fp
    _replace(path, new, 0o666)
    with caplog.at_level(logging.ERROR):
        assert _pinned(settings) == old_fp  # the attacker's key is not taken
        assert _pinned(settings) == old_fp
    said = [r.getMessage() for r in caplog.records if "is not taken" in r.getMessage()]
    assert len(said) == 1 and "may be written by group or others" in said[0], said  # once, not per card
    path.chmod(0o644)  # made right: the renewed key is taken
    assert _pinned(settings) == new_fp


def test_a_key_file_others_may_write_with_no_good_read_before_fails(keys: Path) -> None:
    pem, _fp = _pem()
    path = keys / "carol.pem"
    _write(path, pem, 0o646)
    with pytest.raises(SharedKeyFile, match="may be written by group or others"):
        A2ASettings.model_construct(peer_keys={"bob": str(path)}, trusted_keys=[],
                                    card_max_age=None).card_keys


def test_the_opt_out_keeps_it(keys: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old, _ = _pem()
    new, new_fp = _pem()
    path = keys / "dave.pem"
    _write(path, old)
    settings = A2ASettings(peer_keys={"bob": str(path)})
    monkeypatch.setenv("SENTINEL_SHARED_FILES", "trust")
    _replace(path, new, 0o666)
    assert _pinned(settings) == new_fp


@as_root
def test_a_key_file_replaced_by_a_link_into_another_accounts_folder_keeps_the_old_key(
        keys: Path, tmp_path: Path) -> None:
    old, old_fp = _pem()
    new, _ = _pem()
    path = keys / "erin.pem"
    _write(path, old)
    settings = A2ASettings(trusted_keys=[str(path)], peer_keys={"bob": str(path)})
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o755)
    _write(theirs / "k.pem", new)  # this account's file, in a folder the other account owns
    os.chown(theirs, OTHER, OTHER)
    path.unlink()
    path.symlink_to(theirs / "k.pem")
    assert _pinned(settings) == old_fp
    assert [k.fingerprint for k in settings.card_keys.trusted] == [old_fp]


@as_root
def test_a_key_file_given_to_another_account_keeps_the_old_key(keys: Path) -> None:
    old, old_fp = _pem()
    new, _ = _pem()
    path = keys / "frank.pem"
    _write(path, old)
    settings = A2ASettings(peer_keys={"bob": str(path)})
    _replace(path, new, 0o644)
    os.chown(path, OTHER, OTHER)
    assert _pinned(settings) == old_fp
