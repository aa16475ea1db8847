"""The planner's answer: what the app is made of, in names and choices (never paths).

The model decides the data entity (its name and fields) and, for every feature of the spec, the
screen that implements it (features may share a screen) with a one-line summary. Everything else
of the plan follows from the spec and this blueprint (``project_plan.py``): paths, file kinds,
order and dependencies are derived, so they are safe and consistent by construction.

The JSON Schema below is what a grammar-constrained backend decodes under: one entry per feature,
in the spec's order, its ``feature`` fixed to the spec's text, so every feature is covered even by a
tiny model. Other backends get the same schema in the prompt, and every answer is validated here.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sentinel_mcp.swarm.plan import PlanError
from sentinel_mcp.swarm.spec import TaskSpec

CLASS_NAME = r"^[A-Z][A-Za-z0-9]{2,23}$"
MEMBER_NAME = r"^[a-z][A-Za-z0-9]{1,23}$"
FieldType = Literal["String", "Int", "Boolean"]
# names a generated class or member must not take (Kotlin keywords, members every class has, our own names)
RESERVED = {
    "as",
    "break",
    "class",
    "continue",
    "do",
    "else",
    "false",
    "for",
    "fun",
    "if",
    "in",
    "interface",
    "is",
    "null",
    "object",
    "package",
    "return",
    "super",
    "this",
    "throw",
    "true",
    "try",
    "typealias",
    "typeof",
    "val",
    "var",
    "when",
    "while",
    "id",
    "copy",
    "equals",
    "hashCode",
    "toString",
    "items",
    "message",
    "repository",
    "item",
    "parts",
    "index",
    "adapter",
    "list",
    "action",
    "viewModel",
    "component1",
    "component2",
    "component3",
    "component4",
    "component5",
}
MAX_FIELDS = 4


class EntityField(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=MEMBER_NAME)
    type: FieldType


class FeatureScreen(BaseModel):
    model_config = ConfigDict(extra="forbid")

    feature: str
    screen: str = Field(pattern=CLASS_NAME)
    summary: str = Field(min_length=3, max_length=160)


class Blueprint(BaseModel):
    model_config = ConfigDict(extra="forbid")

    entity: str = Field(pattern=CLASS_NAME)
    text_field: str = Field(pattern=MEMBER_NAME)  # the entity's text (a String): what a list row shows
    more_fields: list[EntityField] = Field(default_factory=list, max_length=MAX_FIELDS - 1)
    screens: list[FeatureScreen] = Field(min_length=1)

    @property
    def fields(self) -> list[EntityField]:
        return [EntityField(name=self.text_field, type="String"), *self.more_fields]

    def screen_names(self) -> list[str]:
        """Distinct screens in the order features first name them."""
        return list(dict.fromkeys(s.screen for s in self.screens))

    def features_of(self, screen: str) -> list[str]:
        return [s.feature for s in self.screens if s.screen == screen]

    def summary_of(self, screen: str) -> str:
        return " ".join(s.summary.strip().rstrip(".") + "." for s in self.screens if s.screen == screen)

    def field(self, name: str) -> EntityField | None:
        return next((f for f in self.fields if f.name == name), None)

    @property
    def text_fields(self) -> list[EntityField]:
        return [f for f in self.fields if f.type != "Boolean"]

    @property
    def flag_fields(self) -> list[EntityField]:
        return [f for f in self.fields if f.type == "Boolean"]


def blueprint_schema(spec: TaskSpec) -> dict[str, Any]:
    """The JSON Schema of a blueprint for this spec (every feature once, in order, its text fixed)."""
    screen_items = [
        {
            "type": "object",
            "additionalProperties": False,
            "required": ["feature", "screen", "summary"],
            "properties": {
                "feature": {"const": f},
                "screen": {"type": "string", "pattern": CLASS_NAME},
                "summary": {"type": "string", "minLength": 3, "maxLength": 80},
            },
        }
        for f in spec.features
    ]
    field = {
        "type": "object",
        "additionalProperties": False,
        "required": ["name", "type"],
        "properties": {
            "name": {"type": "string", "pattern": MEMBER_NAME},
            "type": {"enum": ["String", "Int", "Boolean"]},
        },
    }
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["entity", "text_field", "more_fields", "screens"],
        "properties": {
            "entity": {"type": "string", "pattern": CLASS_NAME},
            # the entity's text (what a list shows), then optional fields (a grammar made from a schema
            # cannot fix an array's first item and vary the rest, so the text field has its own key)
            "text_field": {"type": "string", "pattern": MEMBER_NAME},
            "more_fields": {"type": "array", "items": field, "maxItems": MAX_FIELDS - 1},
            "screens": {
                "type": "array",
                "prefixItems": screen_items,
                "items": False,
                "minItems": len(spec.features),
                "maxItems": len(spec.features),
            },
        },
    }


def blueprint_example(spec: TaskSpec) -> str:
    """A short example answer for the prompt (small models copy shapes well), from another app."""
    return (
        'for a to-do app: {"entity": "Task", "text_field": "title", "more_fields": [{"name": "done", "type": '
        '"Boolean"}], "screens": [{"feature": "see my tasks", "screen": "TaskList", "summary": "Shows the '
        'tasks '
        'in a list."}, ...]}'
    )


def _words(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


def parse_blueprint(data: Any, spec: TaskSpec, *, max_screens: int) -> Blueprint:
    """Validate the planner's answer against the spec; ``PlanError`` lists every problem (the task aborts)."""
    if isinstance(data, dict) and isinstance(data.get("more_fields"), list):
        # models write "string"/"int"/"bool": recognisable spellings are not a planning error
        aliases = {
            "string": "String",
            "str": "String",
            "text": "String",
            "int": "Int",
            "integer": "Int",
            "number": "Int",
            "bool": "Boolean",
            "boolean": "Boolean",
        }
        data = dict(
            data,
            more_fields=[
                dict(f, type=aliases.get(str(f.get("type", "")).strip().lower(), f.get("type")))
                if isinstance(f, dict)
                else f
                for f in data["more_fields"]
            ],
        )
    try:
        bp = Blueprint.model_validate(data)
    except ValidationError as err:
        raise PlanError(
            [f"{'.'.join(str(p) for p in e['loc']) or '(plan)'}: {e['msg']}" for e in err.errors()[:8]]
        ) from None
    problems: list[str] = []
    planned = [_words(s.feature) for s in bp.screens]
    wanted = [_words(f) for f in spec.features]
    missing = [f for f, w in zip(spec.features, wanted) if w not in planned]
    if missing:
        problems.append("features not covered by any screen: " + ", ".join(missing))
    unknown = [s.feature for s, w in zip(bp.screens, planned) if w not in wanted]
    if unknown:
        problems.append("screens for features the spec does not name: " + ", ".join(unknown[:5]))
    if len(planned) != len(set(planned)):
        problems.append("a feature is planned more than once")
    names = [f.name for f in bp.fields]
    if len(names) != len(set(names)):
        problems.append(f"entity {bp.entity} has duplicate field names: {', '.join(names)}")
    for name in names:
        if name in RESERVED:
            problems.append(f"field name {name!r} is reserved")
    screens = bp.screen_names()
    if len(screens) > max_screens:
        problems.append(
            f"{len(screens)} screens planned; at most {max_screens} fit the step cap "
            "(let features share screens)"
        )
    classes = [bp.entity, f"{bp.entity}Repository"] + [
        f"{s}{k}" for s in screens for k in ("Activity", "ViewModel")
    ]
    if len(classes) != len(set(classes)):
        problems.append("two generated classes would have the same name: " + ", ".join(sorted(classes)))
    if bp.entity in RESERVED or any(s.lower() == bp.entity.lower() + "repository" for s in screens):
        problems.append(f"entity name {bp.entity!r} clashes with a generated name")
    if problems:
        raise PlanError(problems)
    return bp
