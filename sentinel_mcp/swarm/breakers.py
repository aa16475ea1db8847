"""Circuit breakers: consecutive step failures, and model errors within a time window."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field
from sentinel_mcp.core.errors import SwarmError

HARD_CONSECUTIVE_FAILURES = 3
HARD_MODEL_ERRORS = 5
HARD_ERROR_WINDOW_SECONDS = 60.0


class BreakerSettings(BaseModel):
    """Thresholds, lowerable like the limits (a lower threshold trips sooner)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    consecutive_failures: int = Field(HARD_CONSECUTIVE_FAILURES, ge=1, le=HARD_CONSECUTIVE_FAILURES)
    model_errors: int = Field(HARD_MODEL_ERRORS, ge=1, le=HARD_MODEL_ERRORS)
    error_window_seconds: float = Field(HARD_ERROR_WINDOW_SECONDS, gt=0, le=HARD_ERROR_WINDOW_SECONDS * 60)


class BreakerTripped(SwarmError):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class ConsecutiveFailureBreaker:
    """Trips after N failed step attempts in a row (across steps); an accepted step resets it.

    A failed attempt is one that produced no usable file: the coder's model call failed, or its
    output was empty. Critic rejections count against the per-step retry cap instead.
    """

    def __init__(self, threshold: int = HARD_CONSECUTIVE_FAILURES) -> None:
        self.threshold = threshold
        self.count = 0

    def record_success(self) -> None:
        self.count = 0

    def record_failure(self, why: str) -> None:
        self.count += 1
        if self.count >= self.threshold:
            raise BreakerTripped("consecutive_failures",
                                 f"circuit breaker: {self.count} consecutive step failures (last: {why})")


class ModelErrorBreaker:
    """Trips when N model errors (each failed HTTP attempt, retried or not) fall within the window."""

    def __init__(self, threshold: int = HARD_MODEL_ERRORS, window: float = HARD_ERROR_WINDOW_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.threshold = threshold
        self.window = window
        self._clock = clock
        self._times: deque[float] = deque()

    def record_error(self, why: str) -> None:
        now = self._clock()
        self._times.append(now)
        while self._times and now - self._times[0] > self.window:
            self._times.popleft()
        if len(self._times) >= self.threshold:
            raise BreakerTripped("model_errors", f"circuit breaker: {len(self._times)} model errors within "
                                                 f"{self.window:g} s (last: {why})")
