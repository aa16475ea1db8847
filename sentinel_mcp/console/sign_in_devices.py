"""Device tokens: what a browser its principal signed in on carries, so that a flood of wrong secrets at the
principal's name, from many addresses, does not lock the principal out of the form there
(``sign_in_limit.py``; OWASP's "device cookies").

A sign-in by the form that succeeds sets a long-lived cookie: a random id, the second it was issued and a
MAC of both with the principal's name, under a key kept in the data directory (a restart keeps its devices;
without a data directory, the process's own). The cookie names nobody (the name is only in the MAC), gives
no session and signs nobody in: a sign-in presenting one valid for the name it is under is checked, and
counted against that device alone, whatever the name's block. A stolen one gives its thief that device's
few guesses, for ``DEVICE_SECONDS`` from its issue by the process clock (no step of the wall clock lengthens
that while the process lives): the cookie's Max-Age is the browser's to honour, and a token kept past it, or
copied off the machine, counted for ever."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import re
import secrets
from pathlib import Path

from sentinel_mcp.core import process_clock

KEY_FILE = "console-device.key"
KEY_BYTES = 32
MAX_TOKEN_CHARS = 100  # an id (22), the second it was issued (10) and a MAC (32), dots between
DEVICE_SECONDS = 90 * 24 * 3600
# another replica's clock a little ahead of this one's: its token is not refused for that
ISSUED_AHEAD = 60.0
_ID = re.compile(r"[A-Za-z0-9_-]{1,43}", re.ASCII)
_ISSUED = re.compile(r"[1-9][0-9]{0,11}", re.ASCII)
_NO_LINK = getattr(os, "O_NOFOLLOW", 0)


class SignInDevices:
    def __init__(self, data_dir: Path | None) -> None:
        self._key = _key(data_dir)

    def issue(self, name: str) -> str:
        """A new device token for ``name``'s principal (a browser it just signed in on)."""
        device, issued = secrets.token_urlsafe(16), str(int(process_clock.now()))
        return f"{device}.{issued}.{self._mac(name, device, issued)}"

    def device(self, token: object, name: str | None) -> str | None:
        """The device id of ``token`` when it is one issued here for ``name`` within ``DEVICE_SECONDS``
        (None: no name, no token, not one of ``name``'s, or past its time)."""
        if name is None or not isinstance(token, str) or len(token) > MAX_TOKEN_CHARS:
            return None
        parts = token.split(".")
        if len(parts) != 3:
            return None
        device, issued, mac = parts
        if not _ID.fullmatch(device) or not _ISSUED.fullmatch(issued):
            return None
        if not hmac.compare_digest(mac, self._mac(name, device, issued)):
            return None
        age = process_clock.now() - int(issued)
        return device if -ISSUED_AHEAD <= age < DEVICE_SECONDS else None

    def _mac(self, name: str, device: str, issued: str) -> str:
        said = b"\0".join(part.encode("utf-8", "surrogatepass") for part in (name, device, issued))
        return hmac.new(self._key, said, hashlib.sha256).hexdigest()[:32]


def _key(data_dir: Path | None) -> bytes:
    """The key in ``data_dir`` (made there at first use, owner-only), or a fresh one for this process when
    there is none or it cannot be kept (a device then lasts as long as the process)."""
    if data_dir is None:
        return secrets.token_bytes(KEY_BYTES)
    path = Path(data_dir) / KEY_FILE
    kept = _read(path)
    if kept is not None:
        return kept
    # written whole to a file of its own, then linked into place: a link never replaces a file, so two
    # processes making it at once agree on the first one linked, and no process reads a key half written
    # (the key file was created empty and written after: a reader between the two signed with its own key)
    key = secrets.token_bytes(KEY_BYTES)
    draft = path.with_name(f".{KEY_FILE}.{secrets.token_hex(8)}")
    try:
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NO_LINK, 0o600)
    except OSError:
        return key
    try:
        try:
            written = os.write(fd, key)
            os.fsync(fd)
        finally:
            os.close(fd)
        if written != KEY_BYTES:
            return key
        os.link(draft, path)
    except FileExistsError:  # another process's key went in first: that one is everybody's
        winner = _read(path)
        return key if winner is None else winner
    except OSError:  # a full disk, say: this process's own key; nothing half written left behind
        return key
    finally:
        with contextlib.suppress(OSError):
            draft.unlink()
    return key


def _read(path: Path) -> bytes | None:
    """The key kept at ``path``; a fresh one when what is there is not a key (a file cut short by an older
    build's crash, or not readable); None when there is none yet."""
    try:
        fd = os.open(path, os.O_RDONLY | _NO_LINK)
    except FileNotFoundError:
        return None
    except OSError:
        return secrets.token_bytes(KEY_BYTES)
    with os.fdopen(fd, "rb") as f:
        kept = f.read(KEY_BYTES + 1)
    return kept if len(kept) == KEY_BYTES else secrets.token_bytes(KEY_BYTES)
