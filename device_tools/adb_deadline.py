"""A deadline for everything one adb call reads, handshakes included.

adbutils times out each ``recv`` only: an adb server (or device) that trickles a byte at a time into a status,
a device list, a version or a FAIL reason whose length it gave as 0xffff holds the worker thread without end,
and an abandoned worker thread is still one of the few the event loop's pool has. Every connection the client
opens during a call is registered with that call's ``Deadline``; when it passes, the sockets are shut down, so
any read blocked in them returns and the call fails.
"""

from __future__ import annotations

import functools
import socket
import threading
from typing import Any

_current = threading.local()  # the Deadline of the call running on this worker thread


class Deadline:
    def __init__(self, seconds: float) -> None:
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> Deadline:
        _current.deadline = self
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()
        _current.deadline = None

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            if self.expired:  # opened after the deadline passed: shut at once
                _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                _shut(sock)


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already closed: nothing blocks on it


@functools.cache  # one class for the process: its calls tell their Deadline apart by thread
def client_class() -> type:
    """adbutils' ``AdbClient`` whose connections are watched by the running call's ``Deadline``."""
    import adbutils

    class DeadlineClient(adbutils.AdbClient):
        def make_connection(self, timeout: float | None = None) -> Any:
            conn = super().make_connection(timeout)
            deadline = getattr(_current, "deadline", None)
            if deadline is not None:
                deadline.watch(conn.conn)
            return conn

    return DeadlineClient
