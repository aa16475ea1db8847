"""The owner's HTTP/A2A token: generated on first start, kept in the data dir with mode 0600. The owner's
console secret (``console_secret.py``) is kept the same way, under another name.

The file is trusted only as a regular file of this user's that nobody else can write: a data dir on a shared
volume or under /tmp may hold a planted symbolic link or file whose text an attacker knows. It appears whole
or not at all: the token is written to a temporary file that is then hard-linked into place, which fails if
the name exists (two first starts agree on one token, and no reader ever sees it empty or half written)."""

from __future__ import annotations

import errno
import logging
import os
import secrets
import stat
from pathlib import Path

from sentinel_mcp.storage.private_paths import ForeignPath, check_private_dir, private_dir
from sentinel_mcp.core.display_text import compose
from sentinel_mcp.core.errors import IdentityError
from sentinel_mcp.tls.file_modes import replaceable_by_others

log = logging.getLogger(__name__)

TOKEN_FILE = "http-token"
MAX_BYTES = 4096  # a token is 43 characters; a larger file is not one
MIN_CHARS = 16
# hard links unsupported (some FUSE, SMB and vfat volumes): create with O_EXCL instead
_NO_LINKS = {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.ENOSYS}
_OPEN_FLAGS = os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class TokenFileError(IdentityError, ValueError):
    """The token file cannot be trusted or used; the message names the file and the fix."""


def token_path(data_dir: Path) -> Path:
    return Path(data_dir) / TOKEN_FILE


def _kept_at(data_dir: Path, name: str, what: str) -> Path:
    """Where the secret ``name`` is kept, its directory made the owner's only if made here (`config token`
    before any start). TokenFileError for a directory another user owns or may write: they could have
    chosen (or could replace) the secret."""
    path = Path(data_dir) / name
    private_dir(path.parent)
    try:
        check_private_dir(path.parent)
    except ForeignPath as e:
        raise TokenFileError(f"{what} is not kept there: {e}") from None
    # and every folder up to / (as ssh's StrictModes): whoever may rename one can put their own data dir there
    why = replaceable_by_others(path.parent)
    if why is not None:
        raise TokenFileError(compose(what, " is not kept there: ", why))
    return path


def load_or_create(
    data_dir: Path, name: str = TOKEN_FILE, what: str = "the owner's token"
) -> tuple[str, bool]:
    """The owner's token (or the secret kept under ``name``) and whether it was created just now.
    TokenFileError (a ValueError) when the file is there but is not a regular file of this user's that only
    this user can write, or holds no token."""
    path = _kept_at(data_dir, name, what)
    try:
        return read(path, what), False
    except FileNotFoundError:
        pass
    token = secrets.token_urlsafe(32)
    if _publish(path, (token + "\n").encode()):
        return token, True
    return read(path, what), False  # another start made it first: its token is everyone's


def read(path: Path, what: str = "the owner's token") -> str:
    """The token kept at ``path`` (FileNotFoundError when there is none). Opened without following a
    symbolic link, then checked on the open descriptor (no race between the check and the read); a file
    others can read is tightened to 0600 and kept (a warning says so)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | _OPEN_FLAGS)  # NONBLOCK: a planted FIFO never hangs
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise TokenFileError(
                f"{path} is a symbolic link; {what} must be a regular file of its own (remove the "
                "link: a new one is generated on the next start)"
            ) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise TokenFileError(
                f"{path} is not a regular file (remove it: a new one is generated on the next start)"
            )
        if st.st_uid != os.geteuid():
            raise TokenFileError(
                f"{path} belongs to user id {st.st_uid}, not to this user ({os.geteuid()}): someone else may "
                f"have chosen {what} (remove it, and keep the data dir this user's only)"
            )
        mode = stat.S_IMODE(st.st_mode)
        if mode & 0o022:
            raise TokenFileError(
                f"{path} can be written by others (mode {mode:o}): someone else may have chosen {what} "
                "(remove it: a new one is generated on the next start)"
            )
        # and every folder up to / (as at start, ``_kept_at``): the file is read again while Sentinel runs,
        # and a data dir made writable by others since lets them put a token of their choosing in place
        why = replaceable_by_others(path.parent)
        if why is not None:
            raise TokenFileError(compose(str(path), " cannot be trusted: ", why))
        if mode & 0o077:
            log.warning("%s was readable by others (mode %o); tightened to 0600", path, mode)
            os.fchmod(fd, 0o600)
        data = _read_at_most(fd, MAX_BYTES + 1)
    finally:
        os.close(fd)
    return _token_in(path, data)


def _token_in(path: Path, data: bytes) -> str:
    try:
        token = data.decode("ascii").strip()
    except UnicodeDecodeError:
        token = ""
    if len(data) > MAX_BYTES or len(token) < MIN_CHARS or not all("!" <= c <= "~" for c in token):
        raise TokenFileError(
            f"{path} holds no usable token ({MIN_CHARS} to {MAX_BYTES} visible ASCII characters); if no "
            "Sentinel uses it, delete it to have a new one generated"
        )
    return token


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks, size = [], 0
    while size < limit:
        chunk = os.read(fd, limit - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def replace(data_dir: Path, name: str = TOKEN_FILE, what: str = "the owner's token") -> str:
    """A new secret in place of the one kept under ``name`` (made if there is none): a running Sentinel
    takes it within a second (``file_secret.py``) and the old one signs nobody in. Renamed into place, so a
    reader sees the old file or the new one, whole. TokenFileError for a directory others could change."""
    path = _kept_at(data_dir, name, what)
    token = secrets.token_urlsafe(32)
    tmp = _written(path, (token + "\n").encode())
    try:
        os.replace(tmp, path)  # a link or any file at the name is replaced, never followed
    except BaseException:
        os.unlink(tmp)
        raise
    _sync_dir(path.parent)
    return token


def _written(path: Path, data: bytes) -> Path:
    """``data`` written and synced under a new temporary name beside ``path`` (mode 0600); that name."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _OPEN_FLAGS, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(tmp)
        raise
    os.close(fd)
    return tmp


def _publish(path: Path, data: bytes) -> bool:
    """Make ``path`` hold ``data`` unless it exists (False then). Written and synced under a temporary name
    first, then linked into place, so the name never shows an empty or partial file."""
    tmp = _written(path, data)
    try:
        try:
            os.link(tmp, path, follow_symlinks=False)  # fails on any existing name, a dangling link included
        except FileExistsError:
            return False
        except OSError as e:
            if e.errno not in _NO_LINKS:
                raise
            return _create_exclusively(path, data)
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
    _sync_dir(path.parent)
    return True


def _create_exclusively(path: Path, data: bytes) -> bool:
    """Without hard links: O_EXCL keeps two first starts to one token, but a reader at that instant may see
    the file empty (refused, never mistaken for a token)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _OPEN_FLAGS, 0o600)
    except FileExistsError:
        return False
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    return True


def _sync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # durability of the name only: the next start makes a new token if it is lost
    finally:
        os.close(fd)
