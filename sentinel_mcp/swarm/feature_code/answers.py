"""What the coder answers for each kind of feature file, and the JSON Schema it answers under.

Each schema is built for its step from what is already decided: the blueprint (entity and fields,
screens) and the answers already accepted (the repository's operations, a screen's buttons). So a
screen can only offer actions the repository has, a view model has exactly one function per action
of its screen, and the code rendered from the answers is consistent across files by construction.
Choices are enums, names are patterns, texts are short strings that end up as string resources.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sentinel_mcp.core import outside_schema
from sentinel_mcp.swarm.blueprint import MEMBER_NAME, RESERVED, Blueprint
from sentinel_mcp.swarm.messages import Issue
from sentinel_mcp.swarm.plan import PlanStep
from sentinel_mcp.swarm.spec import TaskSpec

TEXT_MAX = 48  # a label, hint or message: short, and a bound the grammar enforces


class _Answer(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class RepositoryAnswer(_Answer):
    operations: list[Literal["remove", "update", "clear"]] = Field(
        default_factory=list, max_length=3
    )  # add: always
    order: Literal["newest_first", "oldest_first", "alphabetical"]

    def has(self, op: str) -> bool:
        return op == "add" or op in self.operations


class InputAnswer(_Answer):
    field: str
    hint: str = Field(min_length=1, max_length=TEXT_MAX)


class ButtonAnswer(_Answer):
    action: str
    label: str = Field(min_length=1, max_length=TEXT_MAX)


class ListAnswer(_Answer):
    on_click: str


class ScreenAnswer(_Answer):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, populate_by_name=True)

    title: str = Field(min_length=1, max_length=TEXT_MAX)
    inputs: list[InputAnswer] = Field(default_factory=list, max_length=4)
    buttons: list[ButtonAnswer] = Field(min_length=1, max_length=4)
    listing: ListAnswer | None = Field(None, alias="list")  # "list" would shadow the builtin in this class
    empty: str = Field(min_length=1, max_length=TEXT_MAX)

    def actions(self) -> list[str]:
        """Actions the view model implements: buttons that are not navigation, and the item click."""
        acts = [b.action for b in self.buttons if not b.action.startswith("open_")]
        if self.listing is not None and self.listing.on_click != "none":
            acts.append(self.listing.on_click)
        return list(dict.fromkeys(acts))


class FunctionAnswer(_Answer):
    action: str
    name: str = Field(pattern=MEMBER_NAME)
    done: str = Field(min_length=1, max_length=TEXT_MAX)
    blank: str | None = Field(None, min_length=1, max_length=TEXT_MAX)


class ViewModelAnswer(_Answer):
    functions: list[FunctionAnswer] = Field(default_factory=list)

    def function_for(self, action: str) -> FunctionAnswer | None:
        return next((f for f in self.functions if f.action == action), None)


class ActivityAnswer(_Answer):
    label: str = Field(min_length=1, max_length=TEXT_MAX)
    confirm: bool
    show_fields: list[str] = Field(default_factory=list, max_length=3)


ANSWER_MODELS: dict[str, type[_Answer]] = {
    "repository": RepositoryAnswer,
    "screen_ui": ScreenAnswer,
    "viewmodel": ViewModelAnswer,
    "activity": ActivityAnswer,
}


@dataclass
class Decisions:
    """Everything decided so far in a build: the spec, the blueprint and the accepted answers."""

    spec: TaskSpec
    blueprint: Blueprint
    repository: RepositoryAnswer | None = None
    screens: dict[str, ScreenAnswer] = field(default_factory=dict)
    viewmodels: dict[str, ViewModelAnswer] = field(default_factory=dict)
    activities: dict[str, ActivityAnswer] = field(default_factory=dict)

    def accept(self, step: PlanStep, answer: _Answer) -> None:
        if isinstance(answer, RepositoryAnswer):
            self.repository = answer
        elif isinstance(answer, ScreenAnswer) and step.screen:
            self.screens[step.screen] = answer
        elif isinstance(answer, ViewModelAnswer) and step.screen:
            self.viewmodels[step.screen] = answer
        elif isinstance(answer, ActivityAnswer) and step.screen:
            self.activities[step.screen] = answer

    # ---- what a screen may offer, given the repository -------------------------------------------
    def button_actions(self, screen: str) -> list[str]:
        repo = self.repository
        acts = ["add"] + (["clear"] if repo is not None and repo.has("clear") else [])
        return acts + [f"open_{s}" for s in self.blueprint.screen_names() if s != screen]

    def item_actions(self) -> list[str]:
        repo = self.repository
        acts = ["none"] + (["remove"] if repo is not None and repo.has("remove") else [])
        if repo is not None and repo.has("update"):
            acts += [f"toggle_{f.name}" for f in self.blueprint.flag_fields]
        return acts


TEXT_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9 ,.!?'()-]{0,%d}$"


def _text(max_length: int = TEXT_MAX) -> dict[str, Any]:
    # plain words and punctuation (texts become string resources); the bound sits in the pattern too,
    # because a grammar made from a pattern ignores maxLength
    return {
        "type": "string",
        "minLength": 1,
        "maxLength": max_length,
        "pattern": TEXT_PATTERN % (max_length - 1),
    }


def _obj(props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "properties": props,
        "required": required if required is not None else list(props),
    }


def answer_schema(step: PlanStep, d: Decisions) -> dict[str, Any]:
    """The JSON Schema the coder answers under for ``step``."""
    bp = d.blueprint
    if step.kind == "repository":
        return _obj(
            {
                "operations": {
                    "type": "array",
                    "items": {"enum": ["remove", "update", "clear"]},
                    "maxItems": 3,
                },
                "order": {"enum": ["newest_first", "oldest_first", "alphabetical"]},
            }
        )
    screen = step.screen or ""
    if step.kind == "screen_ui":
        inputs = {
            "type": "array",
            "maxItems": len(bp.text_fields),
            "items": _obj({"field": {"enum": [f.name for f in bp.text_fields]}, "hint": _text()}),
        }
        buttons = {
            "type": "array",
            "minItems": 1,
            "maxItems": 3,
            "items": _obj({"action": {"enum": d.button_actions(screen)}, "label": _text(24)}),
        }
        listing = {"anyOf": [{"type": "null"}, _obj({"on_click": {"enum": d.item_actions()}})]}
        return _obj(
            {"title": _text(), "inputs": inputs, "buttons": buttons, "list": listing, "empty": _text()}
        )
    if step.kind == "viewmodel":
        ui = d.screens.get(screen)
        items = []
        for action in ui.actions() if ui else []:
            props: dict[str, Any] = {
                "action": {"const": action},
                "name": {"type": "string", "pattern": MEMBER_NAME},
                "done": _text(),
            }
            if action == "add":
                props["blank"] = _text()
            items.append(_obj(props))
        return _obj(
            {
                "functions": {
                    "type": "array",
                    "prefixItems": items,
                    "items": False,
                    "minItems": len(items),
                    "maxItems": len(items),
                }
            }
        )
    if step.kind == "activity":
        others = [f.name for f in bp.fields[1:]]
        shown: dict[str, Any] = (
            {"type": "array", "maxItems": min(3, len(others)), "items": {"enum": others}}
            if others
            else {"type": "array", "maxItems": 0}
        )
        return _obj({"label": _text(30), "confirm": {"type": "boolean"}, "show_fields": shown})
    raise ValueError(f"step {step.step_number} ({step.kind}) has no answer schema")


def answer_example(step: PlanStep) -> str:
    """A one-line example of the answer's shape for the prompt."""
    return {
        "repository": '{"operations": ["remove"], "order": "newest_first"}',
        "screen_ui": (
            '{"title": "My tasks", "inputs": [{"field": "title", "hint": "New task"}], '
            '"buttons": [{"action": "add", "label": "Add"}], "list": {"on_click": "none"}, '
            '"empty": "No tasks yet"}'
        ),
        "viewmodel": '{"functions": [{"action": "add", "name": "addTask", "done": "Task added", "blank": '
            '"Type a task"}]}',
        "activity": '{"label": "Tasks", "confirm": true, "show_fields": []}',
    }.get(step.kind or "", "{}")


def parse_answer(step: PlanStep, data: Any, d: Decisions) -> tuple[_Answer | None, list[Issue]]:
    """The answer as a model, or the BLOCKERs that reject it (fed back to the coder on its next attempt)."""
    model = ANSWER_MODELS[step.kind or ""]
    path = step.file_path
    try:
        answer = model.model_validate(data)
    except ValidationError as err:
        return None, [
            Issue(
                severity="BLOCKER",
                file=path,
                message=f"answer does not fit the schema: {'.'.join(str(p) for p in e['loc'])}: {e['msg']}",
            )
            for e in err.errors()[:5]
        ]
    return answer, _semantic_issues(step, answer, d)


def schema_issues(step: PlanStep, data: Any, schema: dict[str, Any]) -> list[Issue]:
    """Where an answer breaks the schema it was asked under (texts' patterns and bounds included).

    The schema is enforced while decoding only on the local model; a backend that was merely shown it
    (openai, sampling) could answer any text, and its texts become the app's string resources."""
    try:
        found = outside_schema.errors(outside_schema.validator(schema), data)
        why = [
            f"{'.'.join(str(p) for p in e.absolute_path) or '(answer)'}: {e.message[:200]}"
            for e in sorted(found, key=lambda e: [str(p) for p in e.absolute_path])
        ]
    except (outside_schema.UnusableSchema, outside_schema.TooCostly) as e:
        why = [f"it cannot be checked ({e})"]
    return [
        Issue(severity="BLOCKER", file=step.file_path, message=f"answer does not fit the schema: {w}")
        for w in why[:5]
    ]


def _semantic_issues(step: PlanStep, a: _Answer, d: Decisions) -> list[Issue]:
    """What the schema cannot say: uniqueness, references to what exists, required pairings."""
    problems: list[str] = []
    bp = d.blueprint
    screen = step.screen or ""
    if isinstance(a, ScreenAnswer):
        fields = [i.field for i in a.inputs]
        if len(fields) != len(set(fields)):
            problems.append("two inputs edit the same field; give each field at most one input")
        unknown = [f for f in fields if bp.field(f) is None or bp.field(f).type == "Boolean"]  # type: ignore[union-attr]
        problems += [f"input for unknown field {f!r}" for f in unknown]
        actions = [b.action for b in a.buttons]
        if len(actions) != len(set(actions)):
            problems.append("two buttons do the same action; give each action at most one button")
        allowed = d.button_actions(screen)
        problems += [
            f"button action {x!r} is not one of {', '.join(allowed)}" for x in actions if x not in allowed
        ]
        if "add" in actions and bp.fields[0].name not in fields:
            problems.append(f"the add button needs an input for {bp.fields[0].name} (the {bp.entity}'s text)")
        if a.listing is not None and a.listing.on_click not in d.item_actions():
            problems.append(
                f"list on_click {a.listing.on_click!r} is not one of {', '.join(d.item_actions())}"
            )
        if a.listing is None and not actions:
            problems.append("the screen shows nothing the user can use: add a list or a button")
    elif isinstance(a, ViewModelAnswer):
        ui = d.screens.get(screen)
        wanted = ui.actions() if ui else []
        got = [f.action for f in a.functions]
        if got != wanted:
            problems.append(
                f"one function per action is needed, in this order: {', '.join(wanted) or 'none'}"
            )
        names = [f.name for f in a.functions]
        if len(names) != len(set(names)):
            problems.append("two functions have the same name")
        problems += [
            f"function name {n!r} is reserved"
            for n in names
            if n in RESERVED or n in ("refresh", "messageShown")
        ]
        problems += [
            f"function {f.name} ({f.action}) needs a blank message"
            for f in a.functions
            if f.action == "add" and not f.blank
        ]
    elif isinstance(a, ActivityAnswer):
        others = {f.name for f in bp.fields[1:]}
        problems += [
            f"show_fields names {x!r}, which is not a field after the first"
            for x in a.show_fields
            if x not in others
        ]
        if len(a.show_fields) != len(set(a.show_fields)):
            problems.append("show_fields repeats a field")
    return [Issue(severity="BLOCKER", file=step.file_path, message=p) for p in problems]
