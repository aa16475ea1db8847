"""Critic: ACCEPT or REJECT one file, with graded issues. Deterministic checks run first."""

from __future__ import annotations

from typing import Any

from sentinel_mcp.swarm.backends.base import ModelReply, ModelRequest, RefusedAnswer, extract_json
from sentinel_mcp.swarm.messages import CriticVerdict, Issue
from sentinel_mcp.swarm.plan import PlanStep
from sentinel_mcp.swarm.profile import CODING_PROFILE
from sentinel_mcp.swarm.spec import TaskSpec
from sentinel_mcp.core.errors import SwarmError

SYSTEM = ("You are the Critic of an Android app generator, the final authority on one file's quality. "
          "Reply with JSON only.\n\n" + CODING_PROFILE)
MAX_FILE_CHARS = 24_000
# a sentence that names the problem (a model that copies "..." from an example cannot fit it)
SENTENCE = r"^[A-Za-z][A-Za-z0-9 ,.:;!?'()/_-]{9,159}$"
_MESSAGE = {"type": "string", "minLength": 10, "maxLength": 160, "pattern": SENTENCE}
# an ACCEPT carries no issues and a REJECT at least one: a verdict cannot contradict itself
VERDICT_SCHEMA: dict[str, Any] = {"anyOf": [
    {"type": "object", "additionalProperties": False, "required": ["decision", "issues"],
     "properties": {"decision": {"const": "ACCEPT"}, "issues": {"const": []}}},
    {"type": "object", "additionalProperties": False, "required": ["decision", "issues"],
     "properties": {"decision": {"const": "REJECT"},
                    "issues": {"type": "array", "minItems": 1, "maxItems": 3, "items": {
                        "type": "object", "additionalProperties": False, "required": ["severity", "message"],
                        "properties": {"severity": {"enum": ["BLOCKER", "MAJOR"]}, "message": _MESSAGE}}}}},
]}


class CriticOutputError(SwarmError, ValueError):
    """The critic's reply could not be read (counts as a critic crash: fail open)."""


class CriticReplyRefused(CriticOutputError):
    """The critic's reply held JSON that cannot be taken as its verdict (two objects, a key twice, ...): the
    file is rejected, not accepted unreviewed (the reply carries the file's text: a verdict quoted from it
    must not decide by making the critic fail open)."""


def critic_request(spec: TaskSpec, step: PlanStep, content: str, findings: list[Issue],
                   texts: dict[str, str] | None = None) -> ModelRequest:
    material = [f"App {spec.app_name} ({spec.package_name}), features: {'; '.join(spec.features)}.",
                f"File {step.file_path}:\n{content[:MAX_FILE_CHARS]}"]
    if texts:
        material.append(
            "Texts it shows (string resources):\n" + "\n".join(f"{k}: {v}" for k, v in texts.items())
        )
    if findings:
        material.append("Automatic checks found (minor):\n" + "\n".join(f"- {i.line()}" for i in findings))
    prompt = (
        f"Review the file above for step {step.step_number}: {step.file_path} ({step.file_type}). "
        f"Its task: {step.description[:800]}\n"
        'ACCEPT a file that does its task: {"decision": "ACCEPT", "issues": []}. REJECT only for a BLOCKER '
        "(syntax error, missing functionality, API misuse) or MAJOR issue (architecture violation, missing "
        'null check), each named in one sentence: {"decision": "REJECT", "issues": [{"severity": "BLOCKER", '
        '"message": "<what is wrong, where>"}]}.'
    )
    return ModelRequest(
        role="critic",
        system=SYSTEM,
        prompt=prompt,
        context="\n\n".join(material),
        json_schema=VERDICT_SCHEMA,
        max_tokens=256,
    )


def parse_critic_reply(reply: ModelReply) -> CriticVerdict:
    data = reply.json_data
    try:
        if data is None:
            data = extract_json(reply.text)
        return CriticVerdict.from_model(data)
    except RefusedAnswer as e:
        raise CriticReplyRefused(f"refused critic reply: {str(e)[:300]}") from None
    except ValueError as e:
        raise CriticOutputError(f"unreadable critic reply: {str(e)[:300]}") from None


def deterministic_verdict(findings: list[Issue]) -> CriticVerdict | None:
    """A REJECT without asking the model when the automatic checks already found a blocker."""
    blockers = [i for i in findings if i.severity == "BLOCKER"]
    return CriticVerdict(decision="REJECT", issues=findings) if blockers else None
