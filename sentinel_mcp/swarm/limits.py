"""Hard caps of a build (the design's Safety Controls table). Policy may lower them, never raise them."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sentinel_mcp.config import ConfigError
from sentinel_mcp.core.errors import SwarmError

HARD_MAX_MODEL_CALLS = 80
HARD_MAX_TOKENS = 200_000
HARD_MAX_WALL_SECONDS = 90 * 60
HARD_MAX_STEPS = 25
HARD_MAX_RETRIES = 3
HARD_MAX_FILE_BYTES = 50 * 1024


class Limits(BaseModel):
    """Per-task caps. ``max_retries`` is the number of retries after a step's first attempt."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_model_calls: int = Field(HARD_MAX_MODEL_CALLS, ge=1, le=HARD_MAX_MODEL_CALLS)
    max_tokens: int = Field(HARD_MAX_TOKENS, ge=1, le=HARD_MAX_TOKENS)
    max_wall_seconds: float = Field(
        HARD_MAX_WALL_SECONDS, gt=0, le=HARD_MAX_WALL_SECONDS, allow_inf_nan=False
    )
    max_steps: int = Field(HARD_MAX_STEPS, ge=1, le=HARD_MAX_STEPS)
    max_retries: int = Field(HARD_MAX_RETRIES, ge=0, le=HARD_MAX_RETRIES)
    max_file_bytes: int = Field(HARD_MAX_FILE_BYTES, ge=64, le=HARD_MAX_FILE_BYTES)

    def lowered(self, **caps: Any) -> Limits:
        """A copy with some caps lowered (a value above the current cap is an error, never a raise)."""
        data = self.model_dump()
        for key, value in caps.items():
            if value is None:
                continue
            if key not in data:
                raise ValueError(f"unknown limit {key!r}; known: {', '.join(data)}")
            # a number as sent: a bool is an int to Python (True would be a cap of 1), a text no number at all
            wanted = (int, float) if Limits.model_fields[key].annotation is float else (int,)
            if isinstance(value, bool) or not isinstance(value, wanted):
                kind = "a whole number" if wanted == (int,) else "seconds"
                raise ValueError(f"{key} must be a number ({kind}), not {type(value).__name__}")
            if value > data[key]:
                raise ValueError(f"{key}={value} is above the cap {data[key]}; limits can only be lowered")
            data[key] = value
        return Limits.model_validate(data, strict=True)


def limits_from_settings(section: dict[str, Any], where: str = "sentinel.swarm.limits") -> Limits:
    try:
        return Limits.model_validate(section or {})
    except ValidationError as e:
        err = e.errors()[0]
        key = ".".join(str(p) for p in err["loc"])
        raise ConfigError(f"{where}.{key}: {err['msg']}") from None


class LimitExceeded(SwarmError):
    """A hard cap was hit; the task is aborted."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class Budget:
    """Counts what a task has spent and enforces the caps where the design says."""

    def __init__(self, limits: Limits, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self._clock = clock
        self.started = clock()
        self.model_calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def elapsed(self) -> float:
        return self._clock() - self.started

    def check_wall_clock(self) -> None:
        """Before each agent."""
        if self.elapsed >= self.limits.max_wall_seconds:
            raise self.wall_clock_reached()

    @property
    def wall_seconds_left(self) -> float:
        return max(0.0, self.limits.max_wall_seconds - self.elapsed)

    def wall_clock_reached(self) -> LimitExceeded:
        return LimitExceeded("wall_clock", f"wall-clock limit of {self.limits.max_wall_seconds:g} s reached")

    def before_model_call(self) -> None:
        """Before each call: the call would be number ``model_calls + 1``."""
        if self.model_calls >= self.limits.max_model_calls:
            raise LimitExceeded("model_calls", f"model-call limit of {self.limits.max_model_calls} reached")
        self.model_calls += 1

    def after_model_call(self, prompt_tokens: int, completion_tokens: int) -> None:
        """After each call: tokens are counted, then checked."""
        self.prompt_tokens += max(0, prompt_tokens)
        self.completion_tokens += max(0, completion_tokens)
        if self.tokens > self.limits.max_tokens:
            raise LimitExceeded(
                "tokens", f"token limit of {self.limits.max_tokens} exceeded ({self.tokens} used)"
            )
