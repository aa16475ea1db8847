"""Reading a config file: a regular file of bounded size in UTF-8, or a clear error naming it.

Why: the path comes from ``-c`` or ``$SENTINEL_CONFIG`` and may name anything: a FIFO (a plain open waits
for a writer forever), ``/dev/zero`` (a whole read never ends), a huge file or bytes that are not UTF-8.
Each ends here as a ConfigError naming the file and the problem, never a hang, a MemoryError or a traceback.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from sentinel_mcp.core.errors import ConfigError

MAX_CONFIG_BYTES = 4 * 1024 * 1024  # far above any real config (a big one is tens of KB)


def read_config_text(p: Path) -> str:
    try:
        # non-blocking: opening a FIFO must not wait for a writer; the fstat below refuses it anyway
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {p}") from None
    except OSError as e:
        if e.errno == errno.ENXIO:  # a FIFO with no writer, or a socket
            raise ConfigError(f"cannot read config file {p}: not a regular file") from None
        raise ConfigError(f"cannot read config file {p}: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError(f"cannot read config file {p}: not a regular file")
        if st.st_size > MAX_CONFIG_BYTES:
            raise ConfigError(
                f"config file {p} is too large ({st.st_size} bytes; at most {MAX_CONFIG_BYTES})"
            )
        data = _read_bounded(fd, p)
    except OSError as e:
        raise ConfigError(f"cannot read config file {p}: {e.strerror or e}") from None
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise ConfigError(
            f"invalid config {p}, line {line} (byte offset {e.start}): not UTF-8 (byte 0x{data[e.start]:02x})"
        ) from None


def _read_bounded(fd: int, p: Path) -> bytes:
    """Read to the end, but never past the bound (the file may grow while it is read)."""
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if total > MAX_CONFIG_BYTES:
            raise ConfigError(f"config file {p} is too large (more than {MAX_CONFIG_BYTES} bytes)")
        chunks.append(chunk)
