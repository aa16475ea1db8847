"""What a stdio upstream writes to its stderr reaches Sentinel's stderr bounded, made visible and named.

The upstream's stderr was Sentinel's own (the file descriptor handed down): a hostile or broken server could
write a gigabyte on one line, lines without end, or terminal escapes that retitle, clear or rewrite the
console of whoever reads the log (the desktop app's log, a terminal running ``serve``). Now each process
writes into a pipe that a thread of Sentinel's drains (so the upstream never blocks on a full pipe), and
what is shown is at most ``LINES_PER_WINDOW`` lines per ``WINDOW_SECONDS`` and ``MAX_SHOWN_BYTES`` in all
per process, each line cut to ``MAX_LINE_CHARS``, its controls and invisible characters shown as
``⟨U+XXXX⟩``, the secrets it may quote masked (``core/sent_secrets.py``), and prefixed ``[upstream NAME]``;
what is left out is counted, and the count shown.
Standard library only (``early_spawn`` starts these before the SDK is imported).
"""

from __future__ import annotations

import os
import sys
import threading
import time

from sentinel_mcp.core.display_text import safe_text
from sentinel_mcp.core.sent_secrets import scrubbed

MAX_LINE_CHARS = 1000
LINES_PER_WINDOW = 100
WINDOW_SECONDS = 60.0
MAX_SHOWN_BYTES = 4_000_000  # over the process's life; past it nothing more is shown
_READ = 65536


class StderrRelay:
    """Reads one process's stderr pipe (in a daemon thread) and writes what may be shown to Sentinel's
    stderr (``sys.stderr`` as it is when the line is written)."""

    def __init__(self, name: str, read_fd: int, principal: str | None = None) -> None:
        self.upstream = name  # whose values sent lately are masked in its lines (``sent_secrets.scrubbed``)
        self.principal = principal  # whose own process it is: only its values mask (None: shared, everyone's)
        self.name = safe_text(name, 80)
        self.fd = read_fd
        self.window_start, self.in_window, self.unshown = time.monotonic(), 0, 0
        self.shown_bytes, self.silenced = 0, False

    def run(self) -> None:
        pending = b""
        cutting = False  # the current line's start was shown: the rest of it is dropped
        try:
            while chunk := os.read(self.fd, _READ):
                lines = (pending + chunk).split(b"\n")
                pending = lines.pop()
                for line in lines:
                    if not cutting:
                        self._line(line)
                    cutting = False
                if len(pending) > MAX_LINE_CHARS * 4:  # a line without end (yet): its start is shown once
                    if not cutting:
                        self._line(pending)
                    cutting, pending = True, b""
            if pending and not cutting:
                self._line(pending)
            self._tell_unshown()
        except OSError:
            pass
        finally:
            os.close(self.fd)

    def _line(self, raw: bytes) -> None:
        now = time.monotonic()
        if now - self.window_start >= WINDOW_SECONDS:
            self._tell_unshown()
            self.window_start, self.in_window = now, 0
        if self.silenced or self.in_window >= LINES_PER_WINDOW:
            self.unshown += 1
            return
        self.in_window += 1
        text = raw.decode("utf-8", "backslashreplace").rstrip("\r")
        # the secret values sent to upstreams lately, and any recognisable secret, masked: an upstream that
        # logs the password it was given does not write it into Sentinel's log (``sent_secrets.py``)
        text = scrubbed(text[:MAX_LINE_CHARS * 4], self.upstream, self.principal)
        self._write(f"[upstream {self.name}] {safe_text(text, MAX_LINE_CHARS)}\n")

    def _tell_unshown(self) -> None:
        if self.unshown and not self.silenced:
            self._write(f"[upstream {self.name}] {self.unshown} more stderr lines not shown (more than "
                        f"{LINES_PER_WINDOW} in {WINDOW_SECONDS:g} s)\n")
        self.unshown = 0

    def _write(self, text: str) -> None:
        if self.shown_bytes + len(text) > MAX_SHOWN_BYTES:
            text = f"[upstream {self.name}] {MAX_SHOWN_BYTES} bytes of its stderr shown: no more is\n"
            self.silenced = True
        self.shown_bytes += len(text)
        try:
            sys.stderr.write(text)
            sys.stderr.flush()
        except (OSError, ValueError):  # Sentinel's own stderr is gone: keep draining the pipe
            pass


def relayed_stderr(name: str, principal: str | None = None) -> int:
    """A pipe's write end for a process's stderr (the caller closes it once the process is spawned), its
    read end drained by a ``StderrRelay``; ``principal``: whose own process it is (None: shared)."""
    read_fd, write_fd = os.pipe()
    relay = StderrRelay(name, read_fd, principal)
    threading.Thread(target=relay.run, name=f"stderr-{relay.name}", daemon=True).start()
    return write_fd
