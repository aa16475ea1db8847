"""A start-up of the HTTP front that fails on a deliberate error (a full disk, a store held by another
process) is said as that error, in one line, and ends ``serve`` with its exit code.

Why: the gateway starts inside the ASGI lifespan, where Starlette sends uvicorn the whole traceback as the
failure's message and uvicorn ends the process with ``sys.exit(3)``: the cause was buried in 60 lines of
frames and the exit code said nothing of it. Any other exception keeps its traceback (a bug must show where
it is)."""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from sentinel_mcp.core.errors import SentinelError

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


def deliberate(error: BaseException) -> SentinelError | None:
    """The deliberate error a failed start-up raised, found in the exception groups task groups wrap it in."""
    if isinstance(error, SentinelError):
        return error
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            found = deliberate(inner)
            if found is not None:
                return found
    return None


class StartupFailure:
    """ASGI wrapper (outermost): holds the lifespan's ``startup.failed`` until the exception behind it is
    known; for a deliberate error it sends none of the traceback, and keeps the error for ``serve``."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.error: SentinelError | None = None

    def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> Awaitable[None]:
        # a request passes through: the inner app's awaitable is handed back, not awaited in a coroutine of
        # this layer's, which each resumption of the request's task would run through (issue 21). uvicorn is
        # told the interface (``serve.py``): it would take a plain ``__call__`` for ASGI 2
        if scope["type"] != "lifespan":
            return self.app(scope, receive, send)  # type: ignore[no-any-return]
        return self._lifespan(scope, receive, send)

    async def _lifespan(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        held: list[dict[str, Any]] = []

        async def holding(message: dict[str, Any]) -> None:
            if message.get("type") == "lifespan.startup.failed":
                held.append(message)
                return
            await send(message)

        try:
            await self.app(scope, receive, holding)
        except BaseException as e:
            self.error = deliberate(e) if held else None
            if held:
                # a deliberate error: no words here, ``serve`` says it once as every command's error is said
                text = "" if self.error is not None else held[0].get("message", "")
                await send({"type": "lifespan.startup.failed", "message": text})
            if self.error is None:
                raise
            return
        for message in held:  # failed without raising: as it was sent
            await send(message)
