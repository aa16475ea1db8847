"""The real gateway over the airline example (stdio subprocess, optionally permissive) with the airline
rulebase, and a client whose user answers Sentinel's questions as the task's user would."""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator

from tests.support.carried_session import Carried
from tests.support.forked_upstreams import forked_spec
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.config import parse_config
from sentinel_mcp.gateway.consents import ConsentBook
from sentinel_mcp.identity.principal import OWNER_NAME
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.paths import PROJECT_ROOT, RULEBASES_DIR


def airline_config(data_dir: Path, user: str | None, *, permissive: bool = True) -> Any:
    args = ["-m", "examples.airline"] + (["--permissive"] if permissive else [])
    seeds = {"current_user": user} if user else {}
    return parse_config({
        "mcpServers": {"airline": {**forked_spec(*args), "cwd": str(PROJECT_ROOT)}},  # forked_upstreams.py
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


PROFILE = "traveller profile"  # the kind of personal data the airline's get_user_details reads


@contextlib.asynccontextmanager
async def airline_gateway(tmp: Path, user: str | None, answers: AnsweringUser, *, mode: str = "auto",
                          permissive: bool = True, consents: tuple[str, ...] = ()) -> AsyncIterator[Carried]:
    """One conversation of the local owner; ``consents``: kinds of personal data the owner granted beforehand
    (as ``sentinel-mcp consent grant`` does), so reading them asks nothing."""
    config = airline_config(tmp, user, permissive=permissive)
    if consents:
        book = ConsentBook(config.store_path.parent / "consents.db")
        try:
            for kind in consents:
                book.grant(OWNER_NAME, kind, by="cli")
        finally:
            book.close()
    async with running_gateway(config) as rt:
        async with Client(rt.front.server, mode=mode, elicitation_callback=answers) as client:
            yield Carried(client)  # a 2026-era client stays in its conversation by carrying its session back


def text_of(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


def data_of(result: Any) -> Any:
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(text_of(result))
