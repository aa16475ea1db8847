"""Health of each open database, for fail-closed decisions and ``/healthz``."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field


@dataclass
class StoreHealth:
    name: str
    ok: bool = True
    cause: str | None = None
    since: float = field(default_factory=time.time)
    failures: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def degrade(self, cause: str) -> None:
        with self._lock:
            if self.ok:
                self.since = time.time()
            self.ok, self.cause = False, cause
            self.failures += 1

    def recover(self) -> None:
        if self.ok:  # the common case: no lock on the hot path
            return
        with self._lock:
            self.ok, self.cause, self.since = True, None, time.time()

    def as_dict(self) -> dict[str, object]:
        return {"ok": self.ok, "cause": self.cause, "since": self.since, "failures": self.failures}


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
