"""A per-upstream circuit breaker: opens after repeated failures, half-opens after a cool-down."""

from __future__ import annotations

import time
from typing import Literal

State = Literal["closed", "open", "half_open"]


class CircuitBreaker:
    def __init__(self, failure_threshold: int = 5, cooldown: float = 30.0) -> None:
        self.failure_threshold = failure_threshold
        self.cooldown = cooldown
        self.failures = 0
        self.opened_at: float | None = None
        self._probe_in_flight = False

    @property
    def state(self) -> State:
        if self.opened_at is None:
            return "closed"
        if time.monotonic() - self.opened_at >= self.cooldown:
            return "half_open"
        return "open"

    def allow(self) -> bool:
        """May a call go through now? In half-open state exactly one probe call is let through."""
        state = self.state
        if state == "closed":
            return True
        if state == "half_open" and not self._probe_in_flight:
            self._probe_in_flight = True
            return True
        return False

    def retry_after(self) -> float:
        if self.opened_at is None:
            return 0.0
        return max(0.0, self.cooldown - (time.monotonic() - self.opened_at))

    def probe_not_made(self) -> None:
        """The call ``allow`` let through as the half-open probe never reached the upstream: another may
        probe."""
        self._probe_in_flight = False

    def record_success(self) -> None:
        self.failures = 0
        self.opened_at = None
        self._probe_in_flight = False

    def record_failure(self) -> None:
        self._probe_in_flight = False
        self.failures += 1
        if self.failures >= self.failure_threshold or self.opened_at is not None:
            self.opened_at = time.monotonic()
