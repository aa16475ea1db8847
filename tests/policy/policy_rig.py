"""Policy test rig: a real MCP server (bookings) behind a real mcp.Client, a GatewayPort over it that
guards every call with the policy guard (as the gateway does), and guards on temporary fact stores."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, AsyncIterator

from mcp import Client
from mcp.types import Tool

from sentinel_mcp.core.tool_ref import ToolRef
from sentinel_mcp.identity.principal import OWNER, Principal

from tests.policy.bookings_server import create  # noqa: E402

from sentinel_mcp.config import PolicySettings  # noqa: E402
from sentinel_mcp.core.decision import Allow, Answer, Ask, Deny, ToolCall  # noqa: E402
from sentinel_mcp.core.port import Completed, InvokeOutcome, NeedsInput, Refused  # noqa: E402
from sentinel_mcp.policy.guard import PolicyGuard  # noqa: E402

RULEBASES = Path(__file__).parent / "rulebases"
BOOKINGS_PL = RULEBASES / "bookings.pl"


class ClientPort:
    """A GatewayPort over one real MCP client: tools exposed as ``<prefix>__<tool>``, each call decided by
    the guard first (so the solver's own fetches are guarded too) and observed after."""

    def __init__(self, client: Client, prefix: str = "bk") -> None:
        self.client = client
        self.prefix = prefix
        self.tools: dict[str, Tool] = {}
        self.guard: PolicyGuard | None = None
        self.log: list[tuple[str, str, dict[str, Any]]] = []  # (origin, name, arguments)

    async def refresh(self) -> None:
        listed = (await self.client.list_tools()).tools
        self.tools = {f"{self.prefix}__{t.name}": t.model_copy(update={"name": f"{self.prefix}__{t.name}"})
                      for t in listed}

    def find_tool(self, name: str) -> Tool | None:
        return self.tools.get(name)

    def list_catalog_tools(self) -> list[Tool]:
        return list(self.tools.values())

    def identity_of(self, name: str) -> ToolRef | None:
        return ToolRef(self.prefix, name.split("__", 1)[1]) if name in self.tools else None

    def self_confirming(self, name: str) -> bool:
        return False

    async def judged_arguments(self, name: str, arguments: Any) -> tuple[dict[str, Any], str | None]:
        return arguments, None  # no gateway between: the upstream gets them as given

    def principal_for(self, principal: Any, session_id: str, origin: str) -> Principal:
        return OWNER  # one person, the owner, who may reach every tool

    def call_of(self, name: str, arguments: dict[str, Any], session_id: str = "s1", origin: str = "client",
                depth: int = 0) -> ToolCall:
        t = self.tools[name]
        ann = t.annotations
        return ToolCall(
            name=name,
            server=self.prefix,
            tool=name.split("__", 1)[1],
            arguments=arguments,
            session_id=session_id,
            origin=origin,
            depth=depth,  # type: ignore[arg-type]
            read_only=ann.read_only_hint if ann else None,
            destructive=ann.destructive_hint if ann else None,
        )

    async def invoke(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        *,
        session_id: str,
        client: str | None = None,
        origin: str = "client",
        answers: dict[str, Answer] | None = None,
        depth: int = 0,
        progress: Any = None,
    ) -> InvokeOutcome:
        if name not in self.tools:
            return Refused(reason=f"unknown tool {name}")
        call = self.call_of(name, arguments or {}, session_id, origin, depth)
        if self.guard is not None:
            d = await self.guard.decide(call)
            for q in d.questions if isinstance(d, Ask) else []:
                if answers and q.key in answers:
                    await self.guard.record_answer(call, q, answers[q.key])
            if answers and isinstance(d, Ask):
                d = await self.guard.decide(call)
            if isinstance(d, Deny):
                return Refused(reason=d.reason, decision=d)
            if isinstance(d, Ask):
                return NeedsInput(reason=d.reason, questions=d.questions)
            assert isinstance(d, Allow)
        self.log.append((origin, name, dict(arguments or {})))
        result = await self.client.call_tool(name.split("__", 1)[1], arguments or {})
        if self.guard is not None:
            await self.guard.observe(call, result)
        return Completed(result=result)


async def make_guard(
    port: ClientPort | None,
    store: Path,
    files: list[Path] | None = None,
    seeds: dict[str, Any] | None = None,
    **kw: Any,
) -> PolicyGuard:
    guard = PolicyGuard(
        files or [BOOKINGS_PL],
        port,
        store_path=store,
        seeds=seeds if seeds is not None else {"current_user": "u_123", "today": "2025-01-15"},
        **{"settings": PolicySettings(guard_timeout=20.0, confirm_ttl=300.0), **kw},
    )
    if port is not None:
        port.guard = guard
    await guard.start(watch=False)
    return guard


class Rig:
    def __init__(self, port: ClientPort, guard: PolicyGuard, state: dict[str, Any]) -> None:
        self.port, self.guard, self.state = port, guard, state


@contextlib.asynccontextmanager
async def rig(
    store: Path,
    *,
    delay: float = 0.0,
    mode: str = "auto",
    files: list[Path] | None = None,
    seeds: dict[str, Any] | None = None,
) -> AsyncIterator[Rig]:
    """The bookings server behind a real client, a port over it, and a started guard; all closed after."""
    server, state = create(delay=delay)
    async with Client(server, mode=mode) as client:
        port = ClientPort(client)
        await port.refresh()
        guard = await make_guard(port, store, files=files, seeds=seeds)
        try:
            yield Rig(port, guard, state)
        finally:
            await guard.close()
