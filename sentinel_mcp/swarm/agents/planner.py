"""Planner: the single source of truth for scope. Its failure aborts the task (no retry)."""

from __future__ import annotations

import json

from sentinel_mcp.swarm.backends.base import ModelReply, ModelRequest, extract_json
from sentinel_mcp.swarm.plan import Plan, PlanError, parse_plan
from sentinel_mcp.swarm.profile import CODING_PROFILE
from sentinel_mcp.swarm.spec import TaskSpec

SYSTEM = ("You are the Planner of an Android app generator. You decompose an app spec into an ordered plan "
          "of files. Reply with JSON only.\n\n" + CODING_PROFILE)

PLAN_SHAPE = ('{"steps": [{"step_number": 1, "phase": "setup", "file_path": "settings.gradle.kts", '
              '"file_type": "gradle", "dependencies": [], "description": "..."}]}')


def planner_request(spec: TaskSpec, max_steps: int) -> ModelRequest:
    prompt = (
        f"Write a plan of 1 to {max_steps} steps for the app spec given above; each step produces exactly one "
        "file.\nRules: include settings.gradle.kts, app/build.gradle.kts and app/src/main/AndroidManifest.xml; "
        f"Kotlin sources under app/src/main/java/{spec.package_path}/; paths are relative, no '..'; "
        "dependencies list only earlier step numbers; name every feature verbatim in the description of the "
        "step that implements it.\n"
        "file_type is one of kotlin, xml, gradle, properties, text.\n"
        f"Shape: {PLAN_SHAPE}"
    )
    context = f"App spec:\n{json.dumps(spec.model_dump(), indent=2)}"
    return ModelRequest(role="planner", system=SYSTEM, prompt=prompt, context=context, grammar="plan",
                        max_tokens=4096)


def parse_planner_reply(reply: ModelReply) -> Plan:
    data = reply.json_data
    if data is None:
        try:
            data = extract_json(reply.text)
        except ValueError as e:
            raise PlanError([f"planner reply is not JSON: {e}"]) from None
    return parse_plan(data)
