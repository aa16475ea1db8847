"""The owner's token file is followed while Sentinel runs (``identity/file_secret.py``), and each re-read is
held to the whole trust rule: not only the file's own descriptor (this account's, nobody else may write it,
not a link) but every folder up to ``/``. A data dir made writable by others (or given to another account)
after start lets that account put a token of its choosing in place; such a file now signs nobody in, and the
error says why. Before, only the file's descriptor was judged on a re-read: a token another account chose
was taken."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from sentinel_mcp.identity import owner_token
from sentinel_mcp.identity.file_secret import FileSecret
from sentinel_mcp.identity.resolver import token_digest

CHOSEN = "a-token-another-account-chose-0123456789"


class _Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        self.t += 1.0
        return self.t


def _planted(path: Path) -> None:
    """A token file as another account able to write the folder would leave it: this account's file (the
    folder's writer renamed in a copy Sentinel itself once wrote), mode 0600, holding the chosen token."""
    new = path.with_name(".planted")
    new.write_text(CHOSEN + "\n")
    new.chmod(0o600)
    os.replace(new, path)


@pytest.fixture
def followed(tmp_path: Path) -> tuple[FileSecret, Path]:
    tmp_path.chmod(0o755)
    data = tmp_path / "outer" / "data"
    data.mkdir(parents=True, mode=0o700)
    data.parent.chmod(0o755)
    token, _ = owner_token.load_or_create(data)
    path = owner_token.token_path(data)
    return FileSecret(path, "the owner's token", token, token_digest, clock=_Clock()), path


@pytest.mark.parametrize("folder", ["data dir", "the folder above"])
def test_a_token_put_in_a_folder_others_may_write_signs_nobody_in(followed, folder: str, caplog) -> None:
    source, path = followed
    target = path.parent if folder == "data dir" else path.parent.parent
    target.chmod(0o777)
    _planted(path)
    with caplog.at_level(logging.ERROR):
        assert source.digest() is None
    assert any("may be written by group or others" in r.getMessage() for r in caplog.records)
    assert source.digest() != token_digest(CHOSEN)
    target.chmod(0o700 if folder == "data dir" else 0o755)
    os.utime(path)  # seen again: the folder is safe, the file is this account's
    assert source.digest() == token_digest(CHOSEN)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another account takes root")
def test_a_token_in_a_folder_given_to_another_account_signs_nobody_in(followed) -> None:
    source, path = followed
    os.chown(path.parent.parent, 12345, 12345)
    _planted(path)
    assert source.digest() is None
