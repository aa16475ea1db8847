"""Planner: the single source of truth for scope. Its failure aborts the task (no retry).

It answers a blueprint (the entity, and a screen per feature); the plan's steps, paths and order are
derived from the spec and the blueprint (``project_plan``), then checked as the design says.
"""

from __future__ import annotations

import json

from sentinel_mcp.swarm.backends.base import ModelReply, ModelRequest, extract_json
from sentinel_mcp.swarm.blueprint import Blueprint, blueprint_example, blueprint_schema, parse_blueprint
from sentinel_mcp.swarm.plan import Plan, PlanError
from sentinel_mcp.swarm.project_plan import compose_plan, max_screens
from sentinel_mcp.swarm.spec import TaskSpec

SYSTEM = (
    "You are the Planner of an Android app generator (Kotlin, MVVM). You decide what the app is made of: "
    "its data and its screens. Reply with JSON only."
)


def planner_request(spec: TaskSpec, max_steps: int) -> ModelRequest:
    prompt = (
        "Plan the app described above. entity: the data the app keeps (a PascalCase noun). text_field: the "
        "name "
        "of its text (camelCase). more_fields: Int or Boolean fields, only if a feature needs them (e.g. "
        "done: "
        "Boolean), else []. screens: for each feature, in order, the screen that implements it "
        f"(PascalCase, e.g. TaskList; features may share a screen; at most {max(1, max_screens(max_steps))} "
        "screens) and a one-line summary of what the user sees and does there.\n"
        f"Example {blueprint_example(spec)}"
    )
    context = f"App spec:\n{json.dumps(spec.model_dump(), indent=1)}"
    return ModelRequest(
        role="planner",
        system=SYSTEM,
        prompt=prompt,
        context=context,
        json_schema=blueprint_schema(spec),
        max_tokens=768,
    )


def parse_planner_reply(reply: ModelReply, spec: TaskSpec, max_steps: int) -> tuple[Blueprint, Plan]:
    """The blueprint and the plan composed from it; ``PlanError`` says why not."""
    data = reply.json_data
    if data is None:
        try:
            data = extract_json(reply.text)
        except ValueError as e:
            raise PlanError([f"planner reply is not JSON: {e}"]) from None
    blueprint = parse_blueprint(data, spec, max_screens=max_screens(max_steps))
    return blueprint, compose_plan(spec, blueprint, max_steps)
