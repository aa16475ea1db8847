"""What one agent run carries from step to step: the steps so far, what it has seen (the grounds a typed
value must come from), its failures and health, the kinds of personal data it has read."""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

import anyio

from sentinel_mcp.agent.framed_lines import one_line, quoted
from sentinel_mcp.agent.health import HealthMonitor, HealthSettings, normalise_grounds
from sentinel_mcp.agent.relay import CallerRelay
from sentinel_mcp.agent.run_credentials import RunCredentials
from sentinel_mcp.agent.screen import Screen
from sentinel_mcp.core.decision import Origin

Progress = Callable[[float, float | None, str | None], Awaitable[None]]
MAX_HISTORY_LINES = 12
MAX_OBSERVED_CHARS = 60_000
MAX_RESULT_CHARS = 1800
T = TypeVar("T")


@dataclass
class RunState:
    session: str
    principal: str
    relay: CallerRelay | None
    origin: Origin = "builtin"
    history: list[str] = field(default_factory=list)
    failures: int = 0
    monitor: HealthMonitor = field(default_factory=lambda: HealthMonitor(HealthSettings()))
    progress: Progress | None = None
    total: float | None = None
    low_steps: int = 0  # steps in a row scored below the threshold
    last_result: str = ""
    observed: list[str] = field(default_factory=list)  # every screen and result seen (what grounds a value)
    personal: set[str] = field(default_factory=set)  # the run's ``RunResult.personal``
    deadline: float = math.inf  # (time.monotonic()) the time cap: no step starts acting after it
    purpose: str | None = None  # the one the run's caller stated: its steps state it
    credentials: RunCredentials | None = None  # the starting request's check (None: they cannot lapse)
    lapsed: str | None = None  # why its credentials stopped holding, once they did
    lapse_recorded: bool = False  # the gateway's row of a call it refused for it already says so

    def still_holds(self) -> bool:
        """Whether the run's credentials still hold (``lapsed`` says why not)."""
        if self.lapsed is None and self.credentials is not None:
            self.lapsed = self.credentials.lapsed()
        return self.lapsed is None

    def past_deadline(self) -> bool:
        return time.monotonic() >= self.deadline

    async def before_deadline(self, call: Awaitable[T]) -> T | None:
        """``call``'s result, or None when the time cap passed first (the call is cancelled): a step's call
        waits no longer than the run may, not the upstream's own timeout (an hour, or forever, for one that
        holds the call open)."""
        with anyio.move_on_after(max(0.0, self.deadline - time.monotonic())):
            return await call
        return None

    def note(self, line: str) -> None:
        self.history.append(one_line(line)[:300])

    def result(self, name: str, text: str) -> None:
        """The last tool result, for the next prompt: quoted under its heading."""
        self.last_result = f"result of {name}:\n{quoted(text[:MAX_RESULT_CHARS])}"

    def seen(self, text: str) -> None:
        self.observed.append(normalise_grounds(text))  # normalised once, when seen, not on every step
        while sum(len(t) for t in self.observed) > MAX_OBSERVED_CHARS and len(self.observed) > 1:
            self.observed.pop(0)

    def grounds(self, goal: str, screen: Screen) -> str:
        return "\n".join([normalise_grounds(goal, screen.describe()), *self.observed])

    def context(self, screen: Screen) -> str:
        """What the model reads as data: the steps so far, the last tool result, the current screen."""
        parts = []
        if self.history:
            parts.append("Steps so far:\n" + "\n".join(self.history[-MAX_HISTORY_LINES:]))
        if self.last_result:
            parts.append(self.last_result)
        parts.append("Current screen:\n" + screen.describe())
        return "\n\n".join(parts)
