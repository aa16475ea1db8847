"""The real gateway over the retail example (stdio subprocess, permissive by default) with retail.pl, and a
client whose user answers Sentinel's questions (MCP elicitation) by the first rule whose text occurs in them.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator

from tests.support.carried_session import Carried
from tests.support.forked_upstreams import forked_spec
from tests.support.held_context import held
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.config import parse_config
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.paths import PROJECT_ROOT, RULEBASES_DIR

DONT_KNOW = object()
# the user of most retail tests: Olivia Ito (olivia_ito_3591), authenticated by her account's email
OLIVIA = ("email address of your account", "olivia.ito5204@example.com")

# The user's yes to every write the retail policy asks about (and the reason a cancellation asks for).
YES = [
    ("Why do you want to cancel", "no longer needed"),
    ("Cancel this order?", True),
    ("Modify the items of this order?", True),
    ("Change the payment method", True),
    ("Change the shipping address", True),
    ("Exchange these items?", True),
    ("Return these items?", True),
]


def retail_config(
    data_dir: Path, *, permissive: bool = True, server: list[str] | None = None, timeout: float | None = None
) -> Any:
    """``server``: the upstream's command line after ``python`` (default: the retail example); ``timeout``:
    how long the gateway waits for its answers (default: the configuration's)."""
    args = server or ["-m", "examples.retail"] + (["--permissive"] if permissive else [])
    # forked from a warm interpreter (~1 s of CPU less a start: support/forked_upstreams.py)
    upstream: dict[str, Any] = {**forked_spec(*args), "cwd": str(PROJECT_ROOT)}
    if timeout is not None:
        upstream["timeout"] = timeout
    return parse_config(
        {
            "mcpServers": {"retail": upstream},
            "sentinel": {
                "rulebases": [str(RULEBASES_DIR / "default.pl"), str(RULEBASES_DIR / "retail.pl")],
                "builtins": ["sentinel"],
                "data_dir": str(data_dir),
            },
        },
        base_dir=str(data_dir),
    )


@dataclass
class Asked:
    message: str
    schema: dict[str, Any]

    @property
    def options(self) -> dict[str, str]:
        prop = self.schema["properties"]["answer"]
        return {o["const"]: o["title"] for o in prop.get("oneOf", [])}


@dataclass
class AnsweringUser:
    """Answers by the first rule whose text occurs in the question; unexpected questions are declined."""

    rules: list[tuple[str, Any]]
    asked: list[Asked] = field(default_factory=list)

    async def __call__(self, context: Any, params: Any) -> ElicitResult:
        q = Asked(params.message, params.requested_schema)
        self.asked.append(q)
        for text, answer in self.rules:
            if text in q.message:
                if answer is DONT_KNOW:
                    props = q.schema["properties"]
                    content = {"dont_know": True} if "dont_know" in props else {"answer": "i_dont_know"}
                    return ElicitResult(action="accept", content=content)
                return ElicitResult(action="accept", content={"answer": answer})
        return ElicitResult(action="decline")

    def messages(self) -> list[str]:
        return [a.message for a in self.asked]


@contextlib.asynccontextmanager
async def retail_gateway(
    tmp: Path, answers: AnsweringUser, *, mode: str = "auto", permissive: bool = True
) -> AsyncIterator[Carried]:
    """One conversation of the local owner with Sentinel over the retail server."""
    async with running_gateway(retail_config(tmp, permissive=permissive)) as rt:
        async with conversation(rt, answers, mode=mode) as c:
            yield c


@contextlib.asynccontextmanager
async def retail_runtime(
    tmp: Path, *, permissive: bool = True, server: list[str] | None = None, timeout: float | None = None
) -> AsyncIterator[Any]:
    """Sentinel over the retail server, for several conversations (``conversation``)."""
    cfg = retail_config(tmp, permissive=permissive, server=server, timeout=timeout)
    async with running_gateway(cfg) as rt:
        yield rt


async def held_runtime(tmp: Path) -> AsyncIterator[Any]:
    """Sentinel over the retail server for a module-scoped fixture (``yield from`` it): entered and left in
    one task of its own (anyio's cancel scopes must be), open while the module's tests run."""
    async for rt in held(retail_runtime(tmp)):
        yield rt


@contextlib.asynccontextmanager
async def conversation(rt: Any, answers: AnsweringUser, *, mode: str = "auto") -> AsyncIterator[Carried]:
    """A new conversation with a running Sentinel (its own session: its own user)."""
    async with Client(rt.front.server, mode=mode, elicitation_callback=answers) as client:
        yield Carried(client)


def text_of(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


def data_of(result: Any) -> Any:
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(text_of(result))


async def order(c: Any, oid: str) -> dict[str, Any]:
    """An order's details as the store has them now (read through the gateway)."""
    return data_of(await c.call_tool("retail__get_order_details", {"order_id": oid}))


def unmet(result: Any) -> list[str]:
    return list(result.structured_content["sentinel"]["unmet"])
