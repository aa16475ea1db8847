"""The plan: 1-25 steps, each producing one file. Validated in full before any code is generated."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sentinel_mcp.swarm.path_safety import UnsafePathError, case_key, check_relative_path
from sentinel_mcp.swarm.spec import TaskSpec
from sentinel_mcp.core.errors import SwarmError

FileType = Literal["kotlin", "xml", "gradle", "properties", "text"]
_EXTENSIONS: dict[str, tuple[str, ...]] = {
    "kotlin": (".kt", ".kts"),
    "xml": (".xml",),
    "gradle": (".gradle", ".gradle.kts"),
    "properties": (".properties",),
}


class PlanStep(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    step_number: int = Field(ge=1)
    phase: str = Field(min_length=1, max_length=60)
    file_path: str = Field(min_length=1)
    file_type: FileType
    dependencies: list[int] = Field(default_factory=list)
    description: str = Field(min_length=1, max_length=2000)
    features: list[str] = Field(default_factory=list)  # spec features this step implements (optional)
    # how the file is made: "scaffold" (from the spec and blueprint, no model call) or "model" (the coder)
    origin: Literal["scaffold", "model"] = "model"
    kind: str | None = None  # what the file is (settings, manifest, layout, viewmodel, ...): picks its schema
    screen: str | None = None  # the screen a feature file belongs to


class Plan(BaseModel):
    model_config = ConfigDict(extra="ignore")

    steps: list[PlanStep]

    def step(self, number: int) -> PlanStep:
        return next(s for s in self.steps if s.step_number == number)


class PlanError(SwarmError, ValueError):
    """A plan the orchestrator will not execute; ``problems`` says why (the task aborts, no retry)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("plan rejected: " + "; ".join(problems))
        self.problems = problems


def _file_type(raw: str, path: Any) -> str:
    """Models say "Kotlin", "kt" or "XML layout": map what is recognisable, else infer from the extension."""
    t = raw.strip().lower()
    aliases = {"kt": "kotlin", "kts": "gradle", "manifest": "xml", "layout": "xml", "resource": "xml"}
    t = aliases.get(t, t)
    if t in _EXTENSIONS or t == "text":
        return t
    if isinstance(path, str):
        for name, exts in sorted(_EXTENSIONS.items(), key=lambda kv: kv[0] != "gradle"):  # .gradle.kts first
            if path.endswith(exts):
                return name
    return "text"


def _normalise(data: Any) -> Any:
    """Accept the shapes models actually produce: a bare list, or {"plan": [...]} / {"steps": [...]}."""
    if isinstance(data, list):
        return {"steps": data}
    if isinstance(data, dict) and "steps" not in data and isinstance(data.get("plan"), list):
        return {"steps": data["plan"]}
    if isinstance(data, dict) and isinstance(data.get("steps"), list):
        steps = []
        for s in data["steps"]:
            if isinstance(s, dict) and isinstance(s.get("file_type"), str):
                s = dict(s, file_type=_file_type(s["file_type"], s.get("file_path")))
            steps.append(s)
        return dict(data, steps=steps)
    return data


def parse_plan(data: Any) -> Plan:
    """Structural parse of the planner's JSON; raises ``PlanError``."""
    try:
        return Plan.model_validate(_normalise(data))
    except ValidationError as err:
        problems = [f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in err.errors()[:8]]
        raise PlanError(problems) from None


def is_gradle_settings(path: str) -> bool:
    return path.rsplit("/", 1)[-1] in ("settings.gradle", "settings.gradle.kts")


def is_gradle_build(path: str) -> bool:
    return path.rsplit("/", 1)[-1] in ("build.gradle", "build.gradle.kts")


def feature_covered(feature: str, plan: Plan) -> bool:
    f = feature.lower()
    return any(f in (x.lower() for x in s.features) or f in s.description.lower() for s in plan.steps)


def validate_plan(plan: Plan, spec: TaskSpec, max_steps: int) -> Plan:
    """The design's plan checks; every problem is collected so the report is complete."""
    problems: list[str] = []
    n = len(plan.steps)
    if not 1 <= n <= max_steps:
        problems.append(f"plan has {n} steps; it must have 1 to {max_steps}")
    seen_numbers: set[int] = set()
    seen_paths: dict[str, str] = {}  # by case_key: a case-insensitive disk holds one of two such files
    for s in plan.steps:
        where = f"step {s.step_number}"
        if s.step_number in seen_numbers:
            problems.append(f"{where}: duplicate step number")
        for d in s.dependencies:
            if d not in seen_numbers:
                problems.append(f"{where}: dependency {d} is not an earlier step")
        seen_numbers.add(s.step_number)
        try:
            check_relative_path(s.file_path)
        except UnsafePathError as e:
            problems.append(f"{where}: {e}")
            continue
        earlier = seen_paths.get(case_key(s.file_path))
        if earlier == s.file_path:
            problems.append(f"{where}: file {s.file_path} is produced by an earlier step too")
        elif earlier is not None:
            problems.append(
                f"{where}: file {s.file_path} differs from {earlier} only in case (one file on "
                "case-insensitive disks)"
            )
        seen_paths.setdefault(case_key(s.file_path), s.file_path)
        exts = _EXTENSIONS.get(s.file_type)
        if exts and not s.file_path.endswith(exts):
            problems.append(f"{where}: file_type {s.file_type} does not match {s.file_path}")
    paths = [s.file_path for s in plan.steps]
    if not any(p.rsplit("/", 1)[-1] == "AndroidManifest.xml" for p in paths):
        problems.append("no step produces AndroidManifest.xml")
    if not any(is_gradle_settings(p) for p in paths):
        problems.append("no step produces settings.gradle(.kts)")
    if not any(is_gradle_build(p) for p in paths):
        problems.append("no step produces a build.gradle(.kts)")
    missing = [f for f in spec.features if not feature_covered(f, plan)]
    if missing:
        problems.append("features not covered by any step: " + ", ".join(missing))
    if problems:
        raise PlanError(problems)
    return plan
