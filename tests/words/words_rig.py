"""The real gateway over the airline example (stdio subprocess, optionally permissive) with the airline
rulebase, and a client whose user answers Sentinel's questions as the task's user would."""

from __future__ import annotations

import contextlib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator

from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.config import parse_config
from sentinel_mcp.gateway.runtime import running_gateway
from sentinel_mcp.paths import PROJECT_ROOT, RULEBASES_DIR


def airline_config(data_dir: Path, user: str | None, *, permissive: bool = True) -> Any:
    args = ["-m", "examples.airline"] + (["--permissive"] if permissive else [])
    seeds = {"current_user": user} if user else {}
    return parse_config({
        "mcpServers": {"airline": {"command": sys.executable, "args": args, "cwd": str(PROJECT_ROOT)}},
        "sentinel": {"rulebases": [str(RULEBASES_DIR / "default.pl"), str(RULEBASES_DIR / "airline.pl")],
                     "builtins": ["sentinel"], "data_dir": str(data_dir), "seeds": seeds},
    }, base_dir=str(data_dir))


@dataclass
class Asked:
    message: str
    schema: dict[str, Any]

    @property
    def options(self) -> dict[str, str]:
        """const -> title of the answer's choices (empty for other questions)."""
        prop = self.schema["properties"]["answer"]
        return {o["const"]: o["title"] for o in prop.get("oneOf", [])}


@dataclass
class AnsweringUser:
    """Answers by the first rule whose text occurs in the question: a value for ``answer``, ``DONT_KNOW`` for
    "I don't know", or a callable given the question. Unexpected questions are declined (and recorded)."""

    rules: list[tuple[str, Any]]
    asked: list[Asked] = field(default_factory=list)

    async def __call__(self, context: Any, params: Any) -> ElicitResult:
        q = Asked(params.message, params.requested_schema)
        self.asked.append(q)
        for text, answer in self.rules:
            if text in q.message:
                if callable(answer):
                    answer = answer(q)
                if answer == DONT_KNOW:
                    props = q.schema["properties"]
                    content = {"dont_know": True} if "dont_know" in props else {"answer": "i_dont_know"}
                    return ElicitResult(action="accept", content=content)
                return ElicitResult(action="accept", content={"answer": answer})
        return ElicitResult(action="decline")

    def messages(self) -> list[str]:
        return [a.message for a in self.asked]


DONT_KNOW = object()


@contextlib.asynccontextmanager
async def airline_gateway(tmp: Path, user: str | None, answers: AnsweringUser, *, mode: str = "auto",
                          permissive: bool = True) -> AsyncIterator[Client]:
    async with running_gateway(airline_config(tmp, user, permissive=permissive)) as rt:
        async with Client(rt.front.server, mode=mode, elicitation_callback=answers) as client:
            yield client


def text_of(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


def data_of(result: Any) -> Any:
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(text_of(result))
