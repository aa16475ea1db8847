"""The loop watching itself: every step is scored for latency, repetition and grounding before it acts.

Scores run from 0 (bad) to 1 (healthy); the step's score is the lowest. Below the threshold the loop recovers
instead of acting (``AgentLoop._recover``): first a reflection is injected into the model's context, then a
replan (the history is folded into one line), and when neither helps the run stops with the reason. Model
errors are retried with backoff. Every reflection is kept with its UTC time in the trace store.

- latency: the step's decision took longer than ``step_seconds`` (recorded; a slow model is not a wrong one)
- repetition: the same call on the same screen again, or a cycle of calls (A B A B, A B C A B C)
- grounding: argument values of a tool call that appear nowhere the agent has seen (goal, screen, results,
  the person's answers): a model inventing a phone number or a recipient is caught before the call
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

CYCLE_PERIODS = (2, 3)
MIN_GROUNDED_CHARS = 3  # shorter values ("up", "1") are too common to judge
MAX_VALUES = 32


class HealthSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    threshold: float = Field(0.5, ge=0.0, le=1.0)  # below it, the step is not acted on: recover
    step_seconds: float = Field(30.0, gt=0, le=600)  # a decision slower than this lowers the latency score
    recoveries: int = Field(2, ge=0, le=5)  # reflection, then replan; one more low step stops the run
    backoff_seconds: float = Field(0.25, ge=0, le=10)  # first retry's wait after a model error; doubles


@dataclass
class StepHealth:
    latency: float = 1.0
    repetition: float = 1.0
    grounding: float = 1.0
    signs: list[str] = field(default_factory=list)

    @property
    def score(self) -> float:
        return min(self.latency, self.repetition, self.grounding)

    def public(self) -> dict[str, Any]:
        return {"score": round(self.score, 2), "latency": round(self.latency, 2),
                "repetition": round(self.repetition, 2), "grounding": round(self.grounding, 2),
                "signs": self.signs}


def call_key(name: str, arguments: dict[str, Any]) -> str:
    """A call without its snapshot: the same tap on the same element is the same call on any snapshot."""
    args = {k: v for k, v in arguments.items() if k != "snapshot_id"}
    return f"{name} {json.dumps(args, sort_keys=True, default=str)}"


class HealthMonitor:
    def __init__(self, settings: HealthSettings) -> None:
        self.settings = settings
        self.calls: list[str] = []  # keys of the calls acted on, in order
        self.seen: set[tuple[str, str]] = set()  # (snapshot, key) acted on

    def assess(self, *, snapshot: str, name: str, arguments: dict[str, Any], seconds: float, grounds: str,
               tool_call: bool) -> StepHealth:
        health = StepHealth()
        if seconds > self.settings.step_seconds:
            health.latency = self.settings.step_seconds / seconds
            health.signs.append(f"slow: the decision took {seconds:.1f} s")
        key = call_key(name, arguments)
        if (snapshot, key) in self.seen:
            health.repetition = 0.0
            health.signs.append(f"repetition: {name} again on the same screen, which it did not change")
        else:
            period = _cycle([*self.calls, key])
            if period:
                health.repetition = 0.2
                health.signs.append(f"repetition: a cycle of {period} calls repeating")
        if tool_call:
            values = _values(arguments)
            missing = [v for v in values if not _grounded(v, grounds)]
            if values and missing:
                # one invented value is enough to hold the call: at most 0.4, lower as more are invented
                health.grounding = 0.4 * (1 - len(missing) / len(values))
                shown = ", ".join(repr(v[:40]) for v in missing[:3])
                health.signs.append(
                    f"ungrounded: {shown} appear nowhere in the goal, the screen or any result"
                )
        return health

    def acted(self, snapshot: str, name: str, arguments: dict[str, Any]) -> None:
        key = call_key(name, arguments)
        self.calls.append(key)
        self.seen.add((snapshot, key))


def _cycle(keys: list[str]) -> int | None:
    """The period of a cycle the last calls form (each period repeated twice, not all one call), if any."""
    for p in CYCLE_PERIODS:
        tail = keys[-2 * p :]
        if len(tail) == 2 * p and tail[:p] == tail[p:] and len(set(tail[:p])) > 1:
            return p
    return None


def _values(arguments: Any) -> list[str]:
    """The argument values worth checking: strings and numbers, recursively (bounded)."""
    out: list[str] = []
    stack = [arguments]
    while stack and len(out) < MAX_VALUES:
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v[:MAX_VALUES])
        elif isinstance(v, bool) or v is None:
            continue
        elif isinstance(v, int | float | str):
            s = str(v).strip()
            if len(s) >= MIN_GROUNDED_CHARS:
                out.append(s)
    return out


_SPACE = re.compile(r"\s+")


def _grounded(value: str, grounds: str) -> bool:
    norm = _SPACE.sub(" ", value.casefold())
    if norm in grounds:
        return True
    # a longer value counts when each of its words was seen ("call Alice Smith" from "Alice" and "Smith")
    words = [w for w in re.split(r"\W+", norm) if len(w) >= MIN_GROUNDED_CHARS]
    return bool(words) and all(w in grounds for w in words)


def normalise_grounds(*parts: str) -> str:
    return _SPACE.sub(" ", "\n".join(parts).casefold())
