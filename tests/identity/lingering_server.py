"""A handshake-era stdio upstream whose work outlives its calls, as a server with background jobs does.

``kick{tag, what}`` answers at once and, in the background, pushes ``what`` (a log line, a form question, a
sampling request or a roots request naming ``tag``) while the next ``hold`` call is in flight; ``hold`` waits
until that push has been answered (or refused). ``outcomes`` lists what came back for each push. No clock is
involved: the push is made while ``hold`` is known to be in flight.

stdio: python lingering_server.py
"""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import asyncio
import json
import warnings
from typing import Any

import anyio
from mcp import MCPDeprecationWarning
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListRootsRequest,
    ListRootsResult,
    ListToolsResult,
    PaginatedRequestParams,
    SamplingMessage,
    TextContent,
    Tool,
    ToolAnnotations,
)

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
RO = ToolAnnotations(read_only_hint=True)
OBJ: dict[str, Any] = {
    "type": "object",
    "properties": {"tag": {"type": "string"}, "what": {"type": "string"}},
}
TOOLS = [
    Tool(name=n, description=d, input_schema=OBJ, annotations=RO)
    for n, d in (
        ("kick", "Answers at once; pushes `what` naming `tag` during the next hold"),
        ("hold", "Waits until the pending push is done"),
        ("outcomes", "What came back for each push"),
    )
]
WAIT_SECONDS = 30.0  # only a safety net: nothing here waits for time to pass


def _text(value: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=value)])


def build_server() -> Server:
    holding = asyncio.Event()  # a hold call is in flight
    pushed = asyncio.Event()  # the pending push came back
    outcomes: list[str] = []
    jobs: set[asyncio.Task[None]] = set()

    async def push(session: Any, tag: str, what: str) -> None:
        with anyio.move_on_after(WAIT_SECONDS):
            await holding.wait()
        try:
            if what == "log":
                await session.send_log_message("info", f"secret-of-{tag}", logger="jobs")
                outcomes.append(f"{tag}:log:sent")
            elif what == "elicit":
                r = await session.elicit_form(
                    f"Delete every file of {tag}?",
                    {"type": "object", "properties": {"ok": {"type": "boolean"}}},
                )
                outcomes.append(f"{tag}:elicit:{r.action}")
            elif what == "sample":
                r = await session.create_message(
                    [SamplingMessage(role="user", content=TextContent(type="text", text=f"summarise {tag}"))],
                    max_tokens=20,
                )
                outcomes.append(f"{tag}:sample:{r.model}")
            elif what == "roots":
                roots = await session.send_request(ListRootsRequest(), ListRootsResult)
                outcomes.append(f"{tag}:roots:{','.join(str(r.uri) for r in roots.roots)}")
        except MCPError as e:
            outcomes.append(f"{tag}:{what}:refused:{e.message}")
        finally:
            pushed.set()

    async def list_tools(ctx: ServerRequestContext, params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=TOOLS)

    async def call_tool(ctx: ServerRequestContext, params: CallToolRequestParams) -> CallToolResult:
        args = params.arguments or {}
        if params.name == "kick":
            pushed.clear()
            job = asyncio.get_running_loop().create_task(
                push(ctx.session, str(args.get("tag", "")), str(args.get("what", "log")))
            )
            jobs.add(job)
            job.add_done_callback(jobs.discard)
            return _text("kicked")
        if params.name == "hold":
            holding.set()
            try:
                with anyio.move_on_after(WAIT_SECONDS):
                    await pushed.wait()
            finally:
                holding.clear()
            return _text("held")
        if params.name == "outcomes":
            return _text(json.dumps(outcomes))
        return _text(f"unknown tool {params.name}")

    return Server("lingering", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    from mcp.server.stdio import stdio_server

    async def main() -> None:
        server = build_server()
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
