"""Reading a file a person names (a config, a swarm spec) without trusting what the name is.

The path may name anything: a FIFO (a plain open waits for a writer for ever), ``/dev/zero`` (a whole read
never ends), a file larger than any real one, or bytes that are not UTF-8. These are the three steps every
such reader takes; each reader words its own errors (which file, which command).
"""

from __future__ import annotations

import errno
import os
import stat
from typing import Callable

from sentinel_mcp.core.errors import SentinelError

CHUNK = 65536


class TooLarge(SentinelError):
    """More bytes than the bound (the file may have grown while it was read)."""


class NotUtf8(SentinelError):
    def __init__(self, line: int, offset: int, byte: int) -> None:
        super().__init__(f"line {line} (byte offset {offset}): not UTF-8 (byte 0x{byte:02x})")
        self.line, self.offset, self.byte = line, offset, byte


def open_regular(path: str | os.PathLike[str]) -> tuple[int, int]:
    """An open descriptor of ``path`` and its size, if it is a regular file; else ``OSError`` (ENXIO: not a
    regular file; a FIFO is opened without waiting for a writer and refused like a directory or a device)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.ENXIO, "not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd, st.st_size


def read_to(read: Callable[[int], bytes], limit: int) -> bytes:
    """Everything ``read`` gives, or ``TooLarge`` as soon as it passes ``limit`` bytes."""
    chunks: list[bytes] = []
    total = 0
    while chunk := read(CHUNK):
        total += len(chunk)
        if total > limit:
            raise TooLarge(limit)
        chunks.append(chunk)
    return b"".join(chunks)


def utf8_text(data: bytes) -> str:
    """The text, or ``NotUtf8`` naming the line, byte offset and byte where decoding stopped."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise NotUtf8(data.count(b"\n", 0, e.start) + 1, e.start, data[e.start]) from None


def read_regular_bytes(path: str | os.PathLike[str], limit: int) -> bytes:
    """A regular file's bytes, at most ``limit`` of them, else ``OSError`` (ENXIO: not a regular file) or
    ``TooLarge``."""
    fd, size = open_regular(path)
    try:
        if size > limit:
            raise TooLarge(limit)
        return read_to(lambda n: os.read(fd, n), limit)
    finally:
        os.close(fd)


def read_regular_text(path: str | os.PathLike[str], limit: int) -> str:
    """The three steps in one: a regular file's UTF-8 text of at most ``limit`` bytes, else ``OSError``
    (ENXIO: not a regular file), ``TooLarge`` or ``NotUtf8`` for the reader to word."""
    return utf8_text(read_regular_bytes(path, limit))


def read_judged_bytes(path: str | os.PathLike[str], limit: int) -> tuple[bytes, str | None]:
    """``read_regular_bytes`` of a file Sentinel trusts: read from the very descriptor judged by
    ``trusted_path.walk`` (no swap between the check and the read), with the reason another account could
    change it (None: none could) for the reader to refuse, or keep under the deployer's opt-out."""
    from sentinel_mcp.core.trusted_path import READ, walk

    walked = walk(path, READ)
    try:
        if not stat.S_ISREG(walked.stat.st_mode):
            raise OSError(errno.ENXIO, "not a regular file")
        if walked.stat.st_size > limit:
            raise TooLarge(limit)
        return read_to(lambda n: os.read(walked.fd, n), limit), walked.why
    finally:
        os.close(walked.fd)
