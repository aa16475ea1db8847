"""An MCPServer whose static resources may answer per caller: the SDK hands a static resource's function no
request context (only a URI template's gets one), so a resource that shows the caller's own state (the facts
summary of its conversation) is read here with the request's ``Context``, from the gateway's ``_meta``."""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Iterable

from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import InputRequiredResult

CallerRead = Callable[[Context], Awaitable[str]]


class CallerResourceServer(MCPServer):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._caller_reads: dict[str, tuple[CallerRead, str]] = {}

    def caller_resource(self, uri: str, *, name: str, mime_type: str, description: str) -> Callable[
        [CallerRead], CallerRead
    ]:
        """Register ``fn(ctx)`` as the static resource ``uri`` (listed as any other). A read without a
        request context (never through the server's handler) gets the refusal text, no one's state."""

        def decorator(fn: CallerRead) -> CallerRead:
            self._caller_reads[uri] = (fn, mime_type)

            def unscoped() -> str:
                return "no caller: this resource shows the caller's own state only"

            self.resource(uri, name=name, mime_type=mime_type, description=description)(unscoped)
            return fn

        return decorator

    async def read_resource(
        self, uri: Any, context: Context | None = None
    ) -> Iterable[ReadResourceContents] | InputRequiredResult:
        held = self._caller_reads.get(str(uri))
        if held is not None and context is not None and context._request_context is not None:
            fn, mime_type = held
            return [ReadResourceContents(content=await fn(context), mime_type=mime_type)]
        return await super().read_resource(uri, context)
