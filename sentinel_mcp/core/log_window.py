"""Lines of one kind in the log are bounded: at most ``per_window`` records from one place in the code
(logger, file, line) a window, then counted; the next record from there in a new window says how many were
not logged.

What reaches the log is often an outsider's doing: a stdio upstream that writes 50,000 lines that are not
JSON-RPC made the SDK log a traceback and Sentinel a warning for each (52 MB of stderr in seconds, into the
log of the desktop app that runs Sentinel); a server-sent stream's unknown events, a scanner's handshakes.
Kept by place, not by text: the SDK writes some of its messages with the outsider's text in them.
"""

from __future__ import annotations

import logging
import sys
import threading
import time

PER_WINDOW = 20
WINDOW_SECONDS = 60.0
MAX_PLACES = 4096  # places logged from in one window (a few hundred exist): past that, every count restarts


class LogWindow(logging.Filter):
    def __init__(self, per_window: int = PER_WINDOW, seconds: float = WINDOW_SECONDS) -> None:
        super().__init__()
        self.per_window, self.seconds = per_window, seconds
        self._places: dict[tuple[str, str, int], list[float]] = {}  # place -> [window start, logged, not]
        self._lock = threading.Lock()  # records come from the event loop and the storage threads

    def filter(self, record: logging.LogRecord) -> bool:
        place = (record.name, record.pathname, record.lineno)
        now = time.monotonic()
        with self._lock:
            seen = self._places.get(place)
            unlogged = 0
            if seen is None or now - seen[0] >= self.seconds:
                unlogged = int(seen[2]) if seen is not None else 0
                if len(self._places) >= MAX_PLACES:
                    self._places.clear()
                seen = self._places[place] = [now, 0, 0]
            if seen[1] >= self.per_window:
                seen[2] += 1
                return False
            seen[1] += 1
        if unlogged:
            record.msg = f"{record.msg} [{unlogged} more like this not logged in the minute before]"
        return True


def bound_log(logger: logging.Logger | None = None) -> None:
    """Every handler of ``logger`` (the root logger's by default) that writes to the process's stderr or
    stdout (what ``logging.basicConfig`` made) keeps within a ``LogWindow``, once. Not another program's
    handlers when ``main`` runs inside it (a test run's capture, which keeps one handler for all its tests
    and would then count one test's lines against the next's)."""
    window = LogWindow()
    for handler in (logger or logging.getLogger()).handlers:
        if getattr(handler, "stream", None) not in (sys.stderr, sys.stdout):
            continue
        if not any(isinstance(f, LogWindow) for f in handler.filters):
            handler.addFilter(window)
