"""SharedDevices: one object per phone, shared by every built-in that reaches it in one gateway.

The device and sensors built-ins may both be configured for the same phone (same adb server, same serial).
The application floor hands each built-in the same ``SharedDevices`` (in ``Services``), so the first built-in
that needs a phone's gate makes it and the other one gets that same gate: one record of what was sent, one set
of read-only and approval rules. Neither built-in imports the other; core does not know what a gate is.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")


class SharedDevices:
    def __init__(self) -> None:
        self._objects: dict[Hashable, Any] = {}
        self._lock = threading.Lock()  # built-ins are created on one thread today; this keeps it true later

    def shared(self, key: Hashable, make: Callable[[], T], kind: type[T]) -> T:
        """The object kept under ``key``, made by ``make()`` the first time. ``kind`` is checked so a key
        that names something else (another area's object under the same key) fails loudly, never silently."""
        with self._lock:
            if key not in self._objects:
                self._objects[key] = make()
            found = self._objects[key]
        if not isinstance(found, kind):
            raise TypeError(f"shared device {key!r} holds a {type(found).__name__}, not a {kind.__name__}")
        return found

    def __len__(self) -> int:
        return len(self._objects)
