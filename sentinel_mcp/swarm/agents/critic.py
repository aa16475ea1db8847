"""Critic: ACCEPT or REJECT one file, with graded issues. Deterministic checks run first."""

from __future__ import annotations

import json

from sentinel_mcp.swarm.backends.base import ModelReply, ModelRequest, extract_json
from sentinel_mcp.swarm.messages import CriticVerdict, Issue
from sentinel_mcp.swarm.plan import PlanStep
from sentinel_mcp.swarm.profile import CODING_PROFILE
from sentinel_mcp.swarm.spec import TaskSpec

SYSTEM = ("You are the Critic of an Android app generator, the final authority on one file's quality. "
          "Reply with JSON only.\n\n" + CODING_PROFILE)
VERDICT_SHAPE = '{"decision": "ACCEPT" | "REJECT", "issues": [{"severity": "BLOCKER"|"MAJOR"|"MINOR", "message": "..."}]}'
MAX_FILE_CHARS = 24_000


class CriticOutputError(ValueError):
    """The critic's reply could not be read (counts as a critic crash: fail open)."""


def critic_request(spec: TaskSpec, step: PlanStep, content: str, findings: list[Issue]) -> ModelRequest:
    material = [f"App spec: {json.dumps(spec.model_dump())}", f"File content:\n{content[:MAX_FILE_CHARS]}"]
    if findings:
        material.append("Automatic checks found (minor):\n" + "\n".join(f"- {i.line()}" for i in findings))
    prompt = (f"Review the file above for step {step.step_number}: {step.file_path} ({step.file_type}). "
              f"Its task: {step.description[:800]}\n"
              "REJECT only for BLOCKER or MAJOR issues. Shape: " + VERDICT_SHAPE)
    return ModelRequest(role="critic", system=SYSTEM, prompt=prompt, context="\n\n".join(material),
                        grammar="critic", max_tokens=1024)


def parse_critic_reply(reply: ModelReply) -> CriticVerdict:
    data = reply.json_data
    try:
        if data is None:
            data = extract_json(reply.text)
        return CriticVerdict.model_validate(data)
    except ValueError as e:
        raise CriticOutputError(f"unreadable critic reply: {str(e)[:300]}") from None


def deterministic_verdict(findings: list[Issue]) -> CriticVerdict | None:
    """A REJECT without asking the model when the automatic checks already found a blocker."""
    blockers = [i for i in findings if i.severity == "BLOCKER"]
    return CriticVerdict(decision="REJECT", issues=findings) if blockers else None
