"""The owner's HTTP/A2A token: generated on first start, kept in the data dir with mode 0600."""

from __future__ import annotations

import logging
import os
import secrets
import stat
from pathlib import Path

log = logging.getLogger(__name__)

TOKEN_FILE = "http-token"


def token_path(data_dir: Path) -> Path:
    return Path(data_dir) / TOKEN_FILE


def load_or_create(data_dir: Path) -> tuple[str, bool]:
    """The owner's token and whether it was created just now. The file is created exclusively (no race
    with a second Sentinel) and readable by its owner only; a file others can read is tightened."""
    path = token_path(data_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return _read(path), False
    token = secrets.token_urlsafe(32)
    with os.fdopen(fd, "w") as fh:
        fh.write(token + "\n")
    return token, True


def _read(path: Path) -> str:
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        log.warning("%s was readable by others (mode %o); tightened to 0600", path, mode)
        path.chmod(0o600)
    token = path.read_text().strip()
    if len(token) < 16:
        raise ValueError(f"{path} holds no usable token (delete it to have a new one generated)")
    return token
