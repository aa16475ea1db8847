"""A one-line progress bar on stderr for CLI builds (a line per event when stderr is not a terminal)."""

from __future__ import annotations

import sys
from typing import TextIO

from sentinel_mcp.swarm.orchestrator import ProgressEvent

WIDTH = 24


class ProgressBar:
    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self._last_len = 0

    def render(self, event: ProgressEvent) -> str:
        if event.total:
            filled = int(WIDTH * min(event.progress, event.total) / event.total)
            bar = "#" * filled + "." * (WIDTH - filled)
            return f"[{bar}] {event.progress:g}/{event.total:g} {event.state:<9} {event.message}"
        return f"[{'.' * WIDTH}] {event.state:<9} {event.message}"

    async def __call__(self, event: ProgressEvent) -> None:
        line = self.render(event)
        if self.tty:
            pad = max(0, self._last_len - len(line))
            self.stream.write("\r" + line + " " * pad)
            self._last_len = len(line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def finish(self) -> None:
        if self.tty and self._last_len:
            self.stream.write("\n")
            self.stream.flush()
