"""A PEM key file ``sentinel.a2a`` names (``card_signing_key``, a ``peer_keys`` or ``trusted_keys`` path),
read while the config loads: a regular file of a key's size, or a ValueError saying why not. A plain read of
a FIFO there waited for a writer for ever, and of ``/dev/zero`` until memory ran out."""

from __future__ import annotations

import errno
from pathlib import Path

from sentinel_mcp.core.outside_file import TooLarge, read_regular_bytes

MAX_KEY_FILE_BYTES = 64 * 1024  # an RSA-8192 private key in PEM is under 7 KB; a certificate chain a few more


def read_key_file(path: str) -> bytes:
    try:
        return read_regular_bytes(Path(path).expanduser(), MAX_KEY_FILE_BYTES)
    except TooLarge:
        raise ValueError(f"the key file is larger than {MAX_KEY_FILE_BYTES} bytes (no PEM key is)") from None
    except OSError as e:
        why = "not a regular file" if e.errno == errno.ENXIO else (e.strerror or str(e))
        raise ValueError(f"cannot read the key file: {why}") from None
