"""The pydantic model of each shipped grammar: every output the grammar allows validates here.

The models check what the grammar already guarantees (types, enums, bounds) so that a grammar
edited by hand cannot silently let malformed data through to the device or the swarm.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

ActionType = Literal["click", "long_click", "type", "clear", "scroll", "swipe", "back", "home", "recents",
                     "open_app", "wait_for", "screenshot", "done", "fail"]
SnapshotId = Annotated[str, StringConstraints(pattern=r"^s-[0-9a-f]{10}$")]
ElementRef = Annotated[
    str, StringConstraints(pattern=r"^(e-[0-9a-f]{8}(\.[1-9][0-9]{0,2})?|#?[1-9][0-9]{0,3})$")
]
RiskLevel = Literal["low", "medium", "high", "critical"]
Severity = Literal["BLOCKER", "MAJOR", "MINOR"]

Reason = Annotated[str, StringConstraints(min_length=1, max_length=300)]


class _Output(BaseModel):
    # strict: JSON types as they are ("0.9" is no score, true no step number, 2.0 no element id); a grammar
    # never writes those, so an output holding one broke the grammar's promise and is refused, not coerced
    model_config = ConfigDict(extra="forbid", strict=True)


class UiAction(_Output):
    action: ActionType
    snapshot_id: SnapshotId | None  # the screen the action was decided on (action.gbnf always writes it)
    element_id: Annotated[int, Field(ge=1, le=9999)] | ElementRef | None = None
    text: Annotated[str, StringConstraints(max_length=500)] | None = None
    reasoning: Reason


class ToolCallOutput(_Output):
    tool: Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_.-]{0,127}$")]
    snapshot_id: SnapshotId | None = None
    arguments: dict[str, object]


class RiskAssessment(_Output):
    risk: RiskLevel
    reasons: list[Reason] = Field(min_length=1, max_length=3)


class PlanStep(_Output):
    step_number: int = Field(ge=1, le=99)
    phase: Annotated[str, StringConstraints(min_length=1, max_length=40)]
    file_path: Annotated[str, StringConstraints(min_length=1, max_length=160)]
    file_type: Annotated[str, StringConstraints(min_length=1, max_length=24)]
    dependencies: list[Annotated[int, Field(ge=1, le=99)]] = Field(max_length=25)
    description: Annotated[str, StringConstraints(min_length=1, max_length=300)]


class Plan(_Output):
    steps: list[PlanStep] = Field(min_length=1, max_length=25)


class CriticIssue(_Output):
    severity: Severity
    message: Reason


class CriticVerdict(_Output):
    decision: Literal["ACCEPT", "REJECT"]
    issues: list[CriticIssue] = Field(max_length=20)


class VerifierReport(_Output):
    warnings: list[Reason] = Field(max_length=20)
    missing_items: list[Reason] = Field(max_length=20)
    quality_score: float = Field(ge=0.0, le=1.0)


# grammar file stem -> the model its output must validate against
GRAMMAR_MODELS: dict[str, type[BaseModel]] = {
    "action": UiAction,
    "tool_call": ToolCallOutput,
    "risk": RiskAssessment,
    "plan": Plan,
    "critic": CriticVerdict,
    "verifier": VerifierReport,
}
