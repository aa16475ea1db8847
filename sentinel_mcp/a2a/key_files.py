"""A PEM key file ``sentinel.a2a`` names (``card_signing_key``, a ``peer_keys`` or ``trusted_keys`` path),
read while the config loads and again each time a peer's card is checked (the file may have been renewed): a
regular file of a key's size, or a ValueError saying why not. A plain read of a FIFO there waited for a writer
for ever, and of ``/dev/zero`` until memory ran out.

A peer key decides whom the A2A front trusts, so the file is held to the rule of every file Sentinel trusts
(``config_file_trust.py``), on every read, judged on the descriptor read (``core/trusted_path.py``): a key
file replaced while running by one another account could change (made group- or world-writable, or a link
into another account's folder) is not taken. The key last read from a good file stays in force, and the error
says why; with no good read before, the read fails (a card is then not verified). ``SENTINEL_SHARED_FILES=
trust`` keeps such a file, as it does at load."""

from __future__ import annotations

import errno
import logging
import threading
from pathlib import Path

from sentinel_mcp.config_file_trust import OPT_OUT, OPT_OUT_VALUE, opted_out
from sentinel_mcp.core.errors import A2AError
from sentinel_mcp.core.outside_file import TooLarge, read_judged_bytes

log = logging.getLogger(__name__)

MAX_KEY_FILE_BYTES = 64 * 1024  # an RSA-8192 private key in PEM is under 7 KB; a certificate chain a few more

_lock = threading.Lock()
_last_good: dict[str, bytes] = {}  # a key file's path -> its bytes as last read from a trusted file
_said: dict[str, str] = {}  # a key file's path -> the refusal last logged for it (logged once per change)


class SharedKeyFile(A2AError, ValueError):
    """A key file another account could change, with no good read of it before."""


def read_key_file(path: str) -> bytes:
    where = Path(path).expanduser()
    try:
        data, why = read_judged_bytes(where, MAX_KEY_FILE_BYTES)
    except TooLarge:
        raise ValueError(f"the key file is larger than {MAX_KEY_FILE_BYTES} bytes (no PEM key is)") from None
    except OSError as e:
        why = "not a regular file" if e.errno == errno.ENXIO else (e.strerror or str(e))
        raise ValueError(f"cannot read the key file: {why}") from None
    name = str(where)
    if why is None or opted_out():
        with _lock:
            _last_good[name] = data
            _said.pop(name, None)
        return data
    with _lock:
        kept = _last_good.get(name)
        first = _said.get(name) != why
        _said[name] = why
    if kept is None:
        raise SharedKeyFile(f"refused: another account could change it: {why} (or {OPT_OUT}={OPT_OUT_VALUE})")
    if first:
        log.error("the key file %s is not taken: another account could change it (%s); the key read from it "
                  "before stays in force", name, why)
    return kept
