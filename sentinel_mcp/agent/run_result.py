"""What one agent run comes to: its status and reason, the answer, the steps it recorded, what it spent."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sentinel_mcp.agent.typed_secrets import TypedSecrets


@dataclass
class RunResult:
    run_id: str
    goal: str
    status: str  # completed | failed | refused | step_cap | time_cap | token_cap | stuck | credentials_lapsed
    reason: str
    answer: str | None
    steps: list[dict[str, Any]] = field(default_factory=list)
    tokens: int = 0
    seconds: float = 0.0
    model: str = ""
    asked: list[str] = field(default_factory=list)
    reflections: list[dict[str, Any]] = field(default_factory=list)  # {n, at (UTC ISO), kind, signs, text}
    # the kinds of personal data the run has read so far (``personal_steps``): every later record holds them
    personal: set[str] = field(default_factory=set)
    # the passwords the run typed into password fields: taken out of everything it keeps (``typed_secrets``)
    secrets: TypedSecrets = field(default_factory=TypedSecrets)

    def public(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "goal": self.goal,
            "status": self.status,
            "reason": self.reason,
            "answer": self.answer,
            "steps": self.steps,
            "tokens": self.tokens,
            "seconds": round(self.seconds, 2),
            "model": self.model,
            "questions_asked": self.asked,
            "reflections": self.reflections,
        }
