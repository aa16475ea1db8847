"""Health of each open database, for fail-closed decisions and ``/healthz``.

``since`` is read by the process clock (``core/process_clock.py``): a recovery is ordered against a read's
start by it, and the wall clock, set back or forward during a read, would order them wrongly (a recovered
store marked down, or a failed one left up).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from sentinel_mcp.core import process_clock


@dataclass
class StoreHealth:
    name: str
    ok: bool = True
    cause: str | None = None
    since: float = field(default_factory=lambda: process_clock.now())
    failures: int = 0
    # how durable a confirmed write is (``config_audit.py``): "full" on disk, "process" in the OS's cache
    sync: str = "full"
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def degrade(self, cause: str) -> None:
        with self._lock:
            if self.ok:
                self.since = process_clock.now()
            self.ok, self.cause = False, cause
            self.failures += 1

    def recover(self) -> None:
        if self.ok:  # the common case: no lock on the hot path
            return
        with self._lock:
            self.ok, self.cause, self.since = True, None, process_clock.now()

    def reading(self) -> float:
        """The clock ``since`` is read by: what a read's start is taken by, to order it against a recovery."""
        return process_clock.now()

    def recovered_after(self, started: float) -> bool:
        """Up, and by a recovery later than ``started`` (a ``reading()``): a read begun during an outage that
        fails now must not mark the store, which works again, as down."""
        return self.ok and self.since > started

    def as_dict(self) -> dict[str, object]:
        return {"ok": self.ok, "cause": self.cause, "since": self.since, "failures": self.failures,
                "sync": self.sync}


_registry: dict[str, StoreHealth] = {}


def register(health: StoreHealth) -> None:
    _registry[health.name] = health


def unregister(health: StoreHealth) -> None:
    if _registry.get(health.name) is health:
        del _registry[health.name]


def storage_problems(names: list[str] | None = None) -> dict[str, str]:
    """Degraded databases (all, or those named) with their cause."""
    return {n: h.cause or "unavailable" for n, h in list(_registry.items())
            if not h.ok and (names is None or n in names)}
