"""Coder: one step at a time, complete file content only."""

from __future__ import annotations

import re

from sentinel_mcp.swarm.backends.base import ModelReply, ModelRequest
from sentinel_mcp.swarm.messages import Issue
from sentinel_mcp.swarm.plan import PlanStep
from sentinel_mcp.swarm.profile import CODING_PROFILE
from sentinel_mcp.swarm.spec import TaskSpec

SYSTEM = ("You are the Coder of an Android app generator. You write exactly one complete file. Reply with the "
          "file content only: no explanations, no markdown fences, no placeholders or TODOs.\n\n" + CODING_PROFILE)
MAX_CONTEXT_CHARS_PER_FILE = 4000  # dependencies are shown, bounded, so prompts stay within budget
_FENCED = re.compile(r"^\s*```[A-Za-z0-9_+.-]*\s*\n(.*?)\n?```\s*$", re.DOTALL)


def coder_request(spec: TaskSpec, step: PlanStep, dependencies: dict[str, str],
                  feedback: list[Issue] | None, max_tokens: int = 8000,
                  completed: list[str] | None = None) -> ModelRequest:
    material = [
        (f"App: {spec.app_name} (package {spec.package_name}, minSdk {spec.min_sdk}, targetSdk {spec.target_sdk}, "
        f"{spec.architecture}, {spec.ui_system})."),
        f"Features: {'; '.join(spec.features)}.",
    ]
    if completed:
        material.append("Files already in the project: " + ", ".join(completed))
    if dependencies:
        material.append("Files it depends on (already accepted):")
        for path, text in dependencies.items():
            material.append(f"--- {path} ---\n{text[:MAX_CONTEXT_CHARS_PER_FILE]}")
    if feedback:
        material.append("Your previous attempt was REJECTED. Fix every issue:")
        material += [f"- {i.line()}" for i in feedback]
    prompt = (f"Step {step.step_number} ({step.phase[:60]}): write {step.file_path} ({step.file_type}).\n"
              f"Task: {step.description[:1000]}")
    if feedback:
        prompt += "\nYour previous attempt was rejected: fix every issue listed above."
    return ModelRequest(role="coder", system=SYSTEM, prompt=prompt, context="\n".join(material),
                        max_tokens=max_tokens)


def parse_coder_reply(reply: ModelReply) -> str:
    """The file content: a reply wrapped in one markdown fence is unwrapped."""
    m = _FENCED.match(reply.text)
    text = m.group(1) if m else reply.text
    return text if text.endswith("\n") or not text else text + "\n"


def truncate_utf8(text: str, max_bytes: int) -> tuple[str, bool]:
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text, False
    return data[:max_bytes].decode("utf-8", errors="ignore"), True
