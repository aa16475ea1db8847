"""Verifier: advisory warnings, missing items and a quality score; it never blocks completion."""

from __future__ import annotations

import json
from typing import Any

from sentinel_mcp.swarm.agents.critic import SENTENCE
from sentinel_mcp.swarm.backends.base import ModelReply, ModelRequest, extract_json
from sentinel_mcp.swarm.messages import Issue, VerifierReport
from sentinel_mcp.swarm.profile import CODING_PROFILE
from sentinel_mcp.swarm.spec import TaskSpec

SYSTEM = (
    "You are the Verifier of an Android app generator. You review the finished project (advisory only). "
    "Reply with JSON only.\n\n" + CODING_PROFILE
)
REPORT_SHAPE = (
    '{"warnings": ["<one sentence each>"], "missing": ["<a feature or file that is missing>"], '
    '"quality_score": 0.8}'
)
MAX_EXCERPT = 400
MAX_EXCERPTS = 3200  # all excerpts together: a small local model has a small context window
_NOTE = {"type": "string", "minLength": 10, "maxLength": 160, "pattern": SENTENCE}
REPORT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["warnings", "missing", "quality_score"],
    "properties": {
        "warnings": {"type": "array", "maxItems": 3, "items": _NOTE},
        "missing": {"type": "array", "maxItems": 3, "items": _NOTE},
        # tenths as an enum: a grammar made from a schema cannot bound a number's value
        "quality_score": {"enum": [round(i / 10, 1) for i in range(11)]},
    },
}


def verifier_request(spec: TaskSpec, files: dict[str, str], findings: list[Issue]) -> ModelRequest:
    tree = "\n".join(f"- {p} ({len(t.encode())} bytes)" for p, t in sorted(files.items()))
    excerpts = "\n".join(
        f"--- {p} ---\n{t[:MAX_EXCERPT]}" for p, t in sorted(files.items()) if p.endswith(".kt")
    )[:MAX_EXCERPTS]
    material = [
        f"App spec: {json.dumps(spec.model_dump())}",
        f"File tree:\n{tree}",
        f"Kotlin excerpts:\n{excerpts}",
    ]
    if findings:
        material.append("Automatic checks found:\n" + "\n".join(f"- {i.line()}" for i in findings[:20]))
    prompt = (
        "Review the finished project above. Check: all features implemented, required files present, "
        "dependency consistency, architecture adherence. Shape: " + REPORT_SHAPE
    )
    return ModelRequest(
        role="verifier",
        system=SYSTEM,
        prompt=prompt,
        context="\n\n".join(material),
        json_schema=REPORT_SCHEMA,
        max_tokens=512,
    )


def parse_verifier_reply(reply: ModelReply) -> VerifierReport:
    data = reply.json_data if reply.json_data is not None else extract_json(reply.text)
    return VerifierReport.model_validate(data)
