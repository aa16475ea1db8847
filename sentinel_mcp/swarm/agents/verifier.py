"""Verifier: advisory warnings, missing items and a quality score; it never blocks completion."""

from __future__ import annotations

import json

from sentinel_mcp.swarm.backends.base import ModelReply, ModelRequest, extract_json
from sentinel_mcp.swarm.messages import Issue, VerifierReport
from sentinel_mcp.swarm.profile import CODING_PROFILE
from sentinel_mcp.swarm.spec import TaskSpec

SYSTEM = ("You are the Verifier of an Android app generator. You review the finished project (advisory only). "
          "Reply with JSON only.\n\n" + CODING_PROFILE)
REPORT_SHAPE = '{"warnings": ["..."], "missing": ["..."], "quality_score": 0.0-1.0}'
MAX_EXCERPT = 1500


def verifier_request(spec: TaskSpec, files: dict[str, str], findings: list[Issue]) -> ModelRequest:
    tree = "\n".join(f"- {p} ({len(t.encode())} bytes)" for p, t in sorted(files.items()))
    excerpts = "\n".join(f"--- {p} ---\n{t[:MAX_EXCERPT]}" for p, t in sorted(files.items()))
    material = [f"App spec: {json.dumps(spec.model_dump())}", f"File tree:\n{tree}", f"Excerpts:\n{excerpts}"]
    if findings:
        material.append("Automatic checks found:\n" + "\n".join(f"- {i.line()}" for i in findings))
    prompt = ("Review the finished project above. Check: all features implemented, required files present, "
              "dependency consistency, architecture adherence. Shape: " + REPORT_SHAPE)
    return ModelRequest(role="verifier", system=SYSTEM, prompt=prompt, context="\n\n".join(material),
                        grammar="verifier", max_tokens=1024)


def parse_verifier_reply(reply: ModelReply) -> VerifierReport:
    data = reply.json_data if reply.json_data is not None else extract_json(reply.text)
    return VerifierReport.model_validate(data)
