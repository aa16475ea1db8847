"""A handshake-era stdio upstream that pushes things in the middle of its calls, for several callers at once.

``work{tag, together, round}`` waits until ``together`` work calls are in flight (no clock: a barrier, its
wait only a safety net), then reports progress naming ``tag`` under the token its request carried, logs a
line naming ``tag``, asks a form question naming ``tag``, reports progress again, and (misbehaving) reports
progress under the token of every work call of an earlier ``round`` (all answered before this round's calls
were made). It answers with the token it saw and what came back for its question. ``touch{uri}`` sends
``notifications/resources/updated`` for ``uri``. ``tokens`` lists every progress token a work call carried.
``doc://alice`` and ``doc://bob`` may be subscribed to.

stdio: python crossed_server.py    streamable HTTP: python crossed_server.py --http PORT
"""

from __future__ import annotations

import asyncio
import json
import sys
import warnings
from typing import Any

import anyio
from mcp import MCPDeprecationWarning
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    EmptyResult,
    ListResourcesResult,
    ListToolsResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    SubscribeRequestParams,
    TextContent,
    TextResourceContents,
    Tool,
    ToolAnnotations,
    UnsubscribeRequestParams,
)

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
RO = ToolAnnotations(read_only_hint=True)
OBJ: dict[str, Any] = {
    "type": "object",
    "properties": {"tag": {"type": "string"}, "together": {"type": "integer"},
                   "round": {"type": "integer"}, "uri": {"type": "string"}},
}
TOOLS = [
    Tool(name=n, description=d, input_schema=OBJ, annotations=RO)
    for n, d in (
        ("work", "Progress, a log line, a question, more progress, all naming tag"),
        ("touch", "Says that uri changed"),
        ("tokens", "Every progress token a work call carried"),
    )
]
DOCS = ("doc://alice", "doc://bob")
WAIT_SECONDS = 30.0  # only a safety net: nothing here waits for time to pass


def _text(value: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=value)])


def _token(ctx: ServerRequestContext) -> Any:
    meta: Any = ctx.meta or {}
    if isinstance(meta, dict):
        return meta.get("progress_token", meta.get("progressToken"))
    return getattr(meta, "progress_token", None)


def build_server() -> Server:
    arrived: list[asyncio.Event] = []  # one per work call, set when it is in flight
    tokens: list[Any] = []
    rounds: dict[int, list[Any]] = {}  # the tokens of each round's work calls

    async def work(ctx: ServerRequestContext, tag: str, together: int, round_: int) -> CallToolResult:
        token = _token(ctx)
        tokens.append(token)
        rounds.setdefault(round_, []).append(token)
        here = asyncio.Event()
        arrived.append(here)
        here.set()
        with anyio.move_on_after(WAIT_SECONDS):
            while sum(e.is_set() for e in arrived) < together:
                await asyncio.sleep(0)  # another call's arrival is one turn of the loop away
        related = ctx.request_id
        said = f"progress-of-{tag}"
        await ctx.session.send_progress_notification(token, 1, 2, said, related_request_id=related)
        await ctx.session.send_log_message("info", f"log-of-{tag}", logger="work",
                                           related_request_id=related)
        try:
            r = await ctx.session.elicit_form(
                f"question-of-{tag}",
                {"type": "object", "properties": {"ok": {"type": "boolean"}}},
                related_request_id=related,
            )
            asked = f"{r.action}:{json.dumps(r.content, sort_keys=True)}"
        except MCPError as e:
            asked = f"refused:{e.message}"
        # the tokens of earlier rounds' calls, all answered before this round began: they name no call now
        for stale in [t for r, ts in list(rounds.items()) if r < round_ for t in ts]:
            # on this call's own stream (streamable HTTP), where only this call's progress is looked for
            await ctx.session.send_progress_notification(stale, 9, 9, f"stale-from-{tag}",
                                                         related_request_id=related)
        await ctx.session.send_progress_notification(token, 2, 2, said, related_request_id=related)
        arrived.remove(here)
        return _text(json.dumps({"tag": tag, "token": token, "asked": asked}))

    async def list_tools(ctx: ServerRequestContext, params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=TOOLS)

    async def call_tool(ctx: ServerRequestContext, params: CallToolRequestParams) -> CallToolResult:
        args = params.arguments or {}
        if params.name == "work":
            together, round_ = int(args.get("together", 1)), int(args.get("round", 0))
            return await work(ctx, str(args.get("tag", "")), together, round_)
        if params.name == "touch":
            await ctx.session.send_resource_updated(str(args.get("uri", "")))
            return _text("touched")
        if params.name == "tokens":
            return _text(json.dumps(tokens))
        return _text(f"unknown tool {params.name}")

    async def list_resources(
        ctx: ServerRequestContext, params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        return ListResourcesResult(resources=[Resource(uri=u, name=u.split("/")[-1]) for u in DOCS])

    async def read_resource(
        ctx: ServerRequestContext, params: ReadResourceRequestParams
    ) -> ReadResourceResult:
        return ReadResourceResult(contents=[TextResourceContents(uri=params.uri, text="doc")])

    async def subscribe(ctx: ServerRequestContext, params: SubscribeRequestParams) -> EmptyResult:
        return EmptyResult()

    async def unsubscribe(ctx: ServerRequestContext, params: UnsubscribeRequestParams) -> EmptyResult:
        return EmptyResult()

    return Server(
        "crossed",
        version="1.0",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_subscribe_resource=subscribe,
        on_unsubscribe_resource=unsubscribe,
    )


if __name__ == "__main__" and sys.argv[1:2] == ["--http"]:
    import uvicorn

    uvicorn.run(build_server().streamable_http_app(), host="127.0.0.1", port=int(sys.argv[2]),
                log_level="warning")
elif __name__ == "__main__":
    from mcp.server.stdio import stdio_server

    async def main() -> None:
        server = build_server()
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
