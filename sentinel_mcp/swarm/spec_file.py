"""Reading a spec for ``sentinel-mcp swarm build``: a regular file (or stdin) of bounded size in UTF-8.

Why: the path may name anything: a FIFO (a plain open waits for a writer forever), ``/dev/zero`` (a whole
read never ends: 2.6 GB in 4.5 s, then a MemoryError), a huge file, or bytes that are not UTF-8 (a
traceback). Each ends as a ConfigError naming the spec and the problem.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO

from sentinel_mcp.config import ConfigError

# far above any valid spec (50 + 10 x 200 + 2,000 characters of text and its JSON)
MAX_SPEC_BYTES = 64 * 1024


def read_spec_text(path: str, stdin: BinaryIO | None = None) -> str:
    """The spec's text; ``-`` reads ``stdin`` (bounded the same way)."""
    if path == "-":
        assert stdin is not None
        return _decoded(_bounded(stdin.read, "stdin"), "stdin")
    try:
        # non-blocking: opening a FIFO must not wait for a writer; the fstat below refuses it anyway
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        why = "not a regular file" if e.errno == errno.ENXIO else (e.strerror or str(e))
        raise ConfigError(f"cannot read spec {path}: {why}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ConfigError(f"cannot read spec {path}: not a regular file")
        data = _bounded(lambda n: os.read(fd, n), path)
    except OSError as e:
        raise ConfigError(f"cannot read spec {path}: {e.strerror or e}") from None
    finally:
        os.close(fd)
    return _decoded(data, path)


def _bounded(read, where: str) -> bytes:
    """Read to the end, never past the bound (a file may grow while it is read)."""
    chunks: list[bytes] = []
    total = 0
    while chunk := read(65536):
        total += len(chunk)
        if total > MAX_SPEC_BYTES:
            raise ConfigError(f"spec {where} is too large (more than {MAX_SPEC_BYTES} bytes)")
        chunks.append(chunk)
    return b"".join(chunks)


def _decoded(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise ConfigError(
            f"spec {where}, line {line} (byte offset {e.start}): not UTF-8 (byte 0x{data[e.start]:02x})"
        ) from None
