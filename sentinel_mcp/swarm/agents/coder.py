"""Coder: decides one feature file at a time, as a JSON answer under the step's schema.

The file itself is rendered from the answer (``feature_code``); the answer's texts become string
resources. On a retry the coder gets the issues that rejected its last answer.
"""

from __future__ import annotations

from typing import Any

from sentinel_mcp.swarm.backends.base import ModelReply, ModelRequest, extract_json
from sentinel_mcp.swarm.feature_code.answers import Decisions, answer_example, answer_schema
from sentinel_mcp.swarm.messages import Issue
from sentinel_mcp.swarm.plan import PlanStep

SYSTEM = (
    "You are the Coder of an Android app generator (Kotlin, MVVM). You decide one file of the app by "
    "answering with one JSON object; the file's code is generated from your answer. Use short, plain texts "
    "a user reads on screen. Reply with JSON only."
)
MAX_FEEDBACK = 6


def _guidance(step: PlanStep, d: Decisions) -> str:
    bp, screen = d.blueprint, step.screen or ""
    if step.kind == "repository":
        return (
            "Items can always be added. Choose the other operations the features need (remove deletes one "
            "item, "
            "update changes one, clear deletes all; none is fine) and the order in which lists show items."
        )
    if step.kind == "screen_ui":
        inputs = ", ".join(f.name for f in bp.text_fields)
        return (
            f"Decide what the {screen} screen shows: a title; the inputs the user types (fields: {inputs}); "
            f"the buttons (actions: {', '.join(d.button_actions(screen))}); whether it lists the {bp.entity} "
            f"items (list, with what tapping an item does: {', '.join(d.item_actions())}) or not (null); "
            "and the text shown while the list is empty."
        )
    if step.kind == "viewmodel":
        ui = d.screens.get(screen)
        acts = ", ".join(ui.actions()) if ui else "none"
        return (
            f"Name one function (camelCase) for each action of the {screen} screen ({acts}) and write the "
            "message shown after it (done); for add also the message shown when the text is blank (blank)."
        )
    if step.kind == "activity":
        rest = ", ".join(f.name for f in bp.fields[1:]) or "none"
        return (
            f"Choose the {screen} screen's title bar label, whether clear and remove ask the user to confirm "
            f"first, and which more fields a list row shows (from: {rest})."
        )
    return ""


def coder_request(
    step: PlanStep, d: Decisions, feedback: list[Issue] | None, max_tokens: int = 512
) -> ModelRequest:
    spec, bp = d.spec, d.blueprint
    fields = ", ".join(f"{f.name}: {f.type}" for f in bp.fields)
    material = [
        f"App {spec.app_name} ({spec.package_name}), features: {'; '.join(spec.features)}.",
        f"Data: {bp.entity}({fields}). Screens: "
        + "; ".join(f"{s} ({', '.join(bp.features_of(s))})" for s in bp.screen_names())
        + ".",
    ]
    if step.kind in ("viewmodel", "activity") and step.screen in d.screens:
        ui = d.screens[step.screen or ""]
        material.append(
            "The screen: "
            + ", ".join([f"title {ui.title!r}"] + [f"button {b.label!r} ({b.action})" for b in ui.buttons])
        )
    prompt = (
        f"Step {step.step_number}: {step.file_path}. {step.description[:400]}\n{_guidance(step, d)}\n"
        f"Answer like this example: {answer_example(step)}"
    )
    if feedback:
        prompt += "\nYour previous answer was REJECTED; fix: " + "; ".join(
            i.message[:150] for i in feedback[:MAX_FEEDBACK]
        )
    return ModelRequest(
        role="coder",
        system=SYSTEM,
        prompt=prompt[:1800],
        context="\n".join(material),
        json_schema=answer_schema(step, d),
        max_tokens=max_tokens,
    )


def answer_data(reply: ModelReply) -> Any:
    """The coder's JSON (structured from a constrained backend, else found in the text); ValueError if none.
    """
    return reply.json_data if reply.json_data is not None else extract_json(reply.text)
