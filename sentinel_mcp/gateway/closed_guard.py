"""The guard when the configured policy cannot govern at all: every call is denied, saying why (fail closed).

Used when rulebases are configured but the policy engine itself cannot run (for example SWI-Prolog or
pyswip is missing). A rulebase that fails to load is handled by the policy guard the same way, and recovers
on hot reload.
"""

from __future__ import annotations

from sentinel_mcp.core.decision import Answer, Deny, Guard, Question, ToolCall


class ClosedGuard(Guard):
    def __init__(self, problem: str) -> None:
        self.problem: str | None = problem

    @property
    def version(self) -> str:
        return "unloaded"

    async def decide(self, call: ToolCall) -> Deny:
        return Deny(
            reason=f"Sentinel denies every call until its policy loads: {self.problem}",
            unmet=["policy_not_loaded"],
            how_to_unblock=["tell the user: Sentinel's policy cannot run (above); fix it and restart"],
        )

    async def record_answer(self, call: ToolCall, question: Question, answer: Answer) -> None:
        return None
