"""How much of an stdio upstream's stdout Sentinel has taken, and how much it has not yet: what the health
check's ping answer may wait behind when Sentinel paused the reading (``notice_budget.py``).

An upstream answers a ping after everything it wrote before (a pipe keeps order). While its reading is paused
what it wrote waits in the pipe and in the reader's buffer; once Sentinel has taken, since the ping went, as
many bytes as waited there then (``unread``; and the chunk the reader holds, ``IN_HAND``), nothing written
before the ping is left ahead of the answer: a window without an answer from then on is the upstream's,
paused or not (``Upstream._pinged``). Counted where the bytes enter the reader's buffer (its ``feed_data``),
so a lean call's answer taken straight off the pipe (``lean_stdio._TappedStdout.at_once``) is not counted:
the measure errs on the side of waiting longer.
"""

from __future__ import annotations

import asyncio
import struct
from typing import Any

IN_HAND = 64 * 1024  # a chunk the SDK's reader (or the lean tap) holds, its lines not yet handed on
PIPE_MAX = 1024 * 1024  # the most a pipe holds for an unprivileged process (fs.pipe-max-size): when unknown
F_GETPIPE_SZ = 1032


class StdoutMeter:
    """One process's stdout, as an asyncio reader takes it (``usable`` False: there is none to read)."""

    def __init__(self, stdout: Any) -> None:
        stream = getattr(stdout, "_stream", None)
        self._reader = stream if isinstance(stream, asyncio.StreamReader) else None
        self.fed = 0  # bytes read off the pipe into the reader's buffer, since the start
        if self._reader is not None:
            feed = self._reader.feed_data

            def fed(data: bytes) -> None:
                self.fed += len(data)
                feed(data)

            self._reader.feed_data = fed  # type: ignore[method-assign, assignment]

    @property
    def usable(self) -> bool:
        return self._reader is not None

    def taken(self) -> int:
        """Bytes taken out of the reader's buffer so far (by the SDK's reader or the lean tap)."""
        return self.fed - self._buffered()

    def unread(self) -> int:
        """Bytes written and not yet taken: in the reader's buffer, in the pipe, and the chunk in hand."""
        return self._buffered() + self._in_pipe() + IN_HAND

    def _buffered(self) -> int:
        return len(getattr(self._reader, "_buffer", b""))

    def _in_pipe(self) -> int:
        transport = getattr(self._reader, "_transport", None)
        pipe = transport.get_extra_info("pipe") if transport is not None else None
        try:
            import fcntl  # POSIX: elsewhere, as much as a pipe may hold
            import termios

            fd = pipe.fileno() if pipe is not None else -1
            if fd < 0:
                return PIPE_MAX
            try:
                return int(struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0" * 4))[0])
            except OSError:
                return int(fcntl.fcntl(fd, F_GETPIPE_SZ))  # its size: as much as it can hold
        except (ImportError, OSError, ValueError, AttributeError):
            return PIPE_MAX

