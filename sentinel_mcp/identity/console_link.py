"""One-time console sign-in links for the owner, made on this machine: the way in that needs no guess.

The sign-in form's limits (``console/sign_in_limit.py``) refuse every secret, right or wrong, from an address
(or from all of them) that sent too many wrong ones; a guesser sharing the owner's address, or flooding from
many, would lock the owner out too. So the owner's local CLI (``sentinel-mcp config console-link``) writes a
link: 256 random bits, of which only the SHA-256 is kept, as a file in ``<data dir>/console-links`` (a
directory of this user's, 0700; each file 0600, created exclusively). The console takes a link once: the file
is renamed away before it is read (two requests, or two processes sharing the directory, cannot both have
it), and only within ``LINK_SECONDS`` of its making. Whoever can write this user's data dir holds the owner's
token and console secret already; a file of another user's, a link, or one more open than 0600 is refused.

A link's age is judged by clocks no one sets back: the console's process clock (``core/process_clock.py``)
against the expiry the file states, and the machine's boot clock (``CLOCK_BOOTTIME``, with the boot's id)
against the one the file recorded at its making. The wall clock alone, set back by up to the link's own ten
minutes, kept a link good that much longer, even for a console started after the step.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import secrets
import stat
from pathlib import Path

from sentinel_mcp.core import process_clock
from sentinel_mcp.core.boot_clock import boot_clock

LINK_DIR = "console-links"
LINK_SECONDS = 600.0
# the link is the page and the token after "#": a fragment is never sent to the server (no access log line,
# no proxy's) nor in any Referer; the page's script moves it into the form the button POSTs
LINK_PATH = "/console/login/once#"
_TOKEN = re.compile(r"[A-Za-z0-9_-]{43}")  # token_urlsafe(32)
_FLAGS = os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_MAX_FILE = 1024


def _directory(data_dir: Path, *, create: bool) -> Path | None:
    """The links' directory if it is this user's own, private directory (made so when ``create``)."""
    path = Path(data_dir) / LINK_DIR
    if create:
        os.makedirs(path, mode=0o700, exist_ok=True)
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None
    return path


def _name(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create(data_dir: Path, seconds: float = LINK_SECONDS) -> str:
    """A new one-time link's token for the owner, good for ``seconds``; expired links' files are removed.
    OSError when the directory cannot be made or is not this user's private one."""
    directory = _directory(data_dir, create=True)
    if directory is None:
        raise PermissionError(f"{Path(data_dir) / LINK_DIR} is not a private directory of this user's")
    now = process_clock.now()
    boot = boot_clock()
    for old in directory.iterdir():
        if _expired(old, now):
            old.unlink(missing_ok=True)
    token = secrets.token_urlsafe(32)
    fd = os.open(directory / _name(token), os.O_WRONLY | os.O_CREAT | os.O_EXCL | _FLAGS, 0o600)
    try:
        life = max(0.0, min(seconds, LINK_SECONDS))
        record: dict[str, object] = {"expires": now + life}
        if boot is not None:
            record["boot"] = {"id": boot[0], "at": boot[1] - (LINK_SECONDS - life)}
        os.write(fd, json.dumps(record).encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    return token


def _expired(path: Path, now: float) -> bool:
    try:
        return path.lstat().st_mtime < now - LINK_SECONDS
    except OSError:
        return False


def claim(data_dir: Path | None, token: object) -> bool:
    """Whether ``token`` is a link made here and not yet used or expired; it is used up either way."""
    if data_dir is None or not isinstance(token, str) or not _TOKEN.fullmatch(token):
        return False
    directory = _directory(data_dir, create=False)
    if directory is None:
        return False
    name = _name(token)
    taken = directory / f"{name}.taken.{secrets.token_hex(8)}"
    try:
        os.rename(directory / name, taken)  # atomic: one claimant has it, every other finds nothing
    except OSError:
        return False
    try:
        fd = os.open(taken, os.O_RDONLY | os.O_NONBLOCK | _FLAGS)
    except OSError:
        taken.unlink(missing_ok=True)
        return False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
            return False
        data = os.read(fd, _MAX_FILE + 1)
    finally:
        os.close(fd)
        taken.unlink(missing_ok=True)
    try:
        record = json.loads(data) if len(data) <= _MAX_FILE else None
    except ValueError:
        return False
    if not isinstance(record, dict):
        return False
    expires = record.get("expires")
    now = process_clock.now()  # never back while the console lives
    if not (isinstance(expires, float) and math.isfinite(expires) and now < expires <= now + LINK_SECONDS):
        return False
    return _young_by_boot_clock(record.get("boot"))


def _young_by_boot_clock(made: object) -> bool:
    """Whether the boot clock the file recorded is this boot's, at most ``LINK_SECONDS`` ago (a console
    started after the wall clock was set back cannot tell by its process clock). Without one: only where
    this system has no boot clock either."""
    boot = boot_clock()
    if boot is None:
        return True
    if not isinstance(made, dict) or made.get("id") != boot[0]:
        return False
    at = made.get("at")
    return isinstance(at, float) and math.isfinite(at) and 0.0 <= boot[1] - at < LINK_SECONDS
