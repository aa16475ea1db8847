"""The async side of ``sentinel-mcp chat``: one MCP client session with Sentinel, in a thread of its own.

The terminal (``chat_terminal.py``) owns stdin and stdout in the main thread; this side owns the event loop,
the
gateway (in-process, or a running one over ``--url``) and the real ``mcp`` client. Goals run as
``agent__agent_run`` calls, exactly as any client's: the same agent loop, the same guard and audit. What the
session hears (a step's decision and outcome as progress, a question as an elicitation) is put on ``events``
for the terminal; a question waits for the person's typed answer through a future the terminal completes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import queue
import threading
from collections.abc import AsyncIterator, Coroutine
from dataclasses import dataclass, field
from typing import Any

from mcp import Client
from mcp.types import CallToolResult, ElicitRequestParams, ElicitResult

from sentinel_mcp.config import Config


@dataclass
class Step:
    message: str


@dataclass
class Question:
    message: str
    schema: dict[str, Any]
    reply: concurrent.futures.Future[ElicitResult] = field(default_factory=concurrent.futures.Future)


@dataclass
class Notice:
    """Something Sentinel says besides steps and questions (a peer agent's help request, a warning)."""

    message: str


class ChatLink:
    def __init__(
        self, *, config: Config | None, url: str | None = None, token: str | None = None, agent: str = "agent"
    ) -> None:
        self.config, self.url, self.token, self.agent = config, url, token, agent
        self.events: queue.Queue[Step | Question | Notice] = queue.Queue()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="sentinel-chat", daemon=True)
        self._client: Client | None = None
        self._closing: asyncio.Event | None = None
        self._session: concurrent.futures.Future[None] | None = None

    # ------------------------------------------------------------------ lifecycle (called from the terminal)
    def start(self, timeout: float = 120) -> list[str]:
        """Connect; the warnings the gateway had at start-up (bad upstreams, policy problems)."""
        self._thread.start()
        ready: concurrent.futures.Future[list[str]] = concurrent.futures.Future()
        self._session = asyncio.run_coroutine_threadsafe(self._hold(ready), self._loop)
        try:
            return ready.result(timeout)
        except BaseException:
            if self._session.done() and self._session.exception():
                raise self._session.exception() from None  # type: ignore[misc]
            raise

    def close(self, timeout: float = 30) -> None:
        if self._closing is not None:
            self._loop.call_soon_threadsafe(self._closing.set)
        if self._session is not None:
            with contextlib.suppress(BaseException):
                self._session.result(timeout)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout)

    def submit(self, coro: Coroutine[Any, Any, Any]) -> concurrent.futures.Future[Any]:
        """Run on the session's loop; cancelling the future cancels the call (Ctrl-C), not the session."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    # ------------------------------------------------------------------ what the terminal asks for
    async def run_goal(self, goal: str) -> CallToolResult:
        async def progress(progress: float, total: float | None, message: str | None) -> None:
            if message:
                self.events.put(Step(message))

        return await self.client.call_tool(
            f"{self.agent}__agent_run", {"goal": goal}, progress_callback=progress
        )

    async def call(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        return await self.client.call_tool(tool, arguments)

    @property
    def client(self) -> Client:
        if self._client is None:
            raise RuntimeError("the chat is not connected to Sentinel")
        return self._client

    # ------------------------------------------------------------------ the session
    async def _on_elicit(self, context: Any, params: ElicitRequestParams) -> ElicitResult:
        question = Question(getattr(params, "message", ""), getattr(params, "requested_schema", {}) or {})
        self.events.put(question)
        try:
            return await asyncio.wrap_future(question.reply)
        except asyncio.CancelledError:
            question.reply.cancel()
            raise

    async def _hold(self, ready: concurrent.futures.Future[list[str]]) -> None:
        self._closing = asyncio.Event()
        try:
            async with self._connect() as (client, warnings):
                self._client = client
                ready.set_result(warnings)
                await self._closing.wait()
        except BaseException as e:
            if not ready.done():
                ready.set_exception(e if isinstance(e, Exception) else RuntimeError(str(e)))
            raise
        finally:
            self._client = None

    @contextlib.asynccontextmanager
    async def _connect(self) -> AsyncIterator[tuple[Client, list[str]]]:
        if self.url:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
            http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=3600))
            async with Client(
                streamable_http_client(self.url, http_client=http),
                mode="legacy",
                elicitation_callback=self._on_elicit,
            ) as c:
                yield c, []
            return
        from sentinel_mcp.app.runtime import running_gateway

        assert self.config is not None
        async with running_gateway(self.config, default_session="cli") as rt:
            warnings = [*rt.problems, *([rt.policy_problem] if rt.policy_problem else [])]
            # legacy: the steps' progress and questions are pushed while the run goes on
            async with Client(rt.front.server, mode="legacy", elicitation_callback=self._on_elicit) as c:
                yield c, warnings
            await rt.audit.flush()
