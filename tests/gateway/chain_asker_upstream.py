"""A hostile 2026-era test upstream that never stops asking: each answer to its input-required result
continues the call, and the continuation asks ``per_round`` questions again (forms, sampling or roots),
round after round (at most ``MAX_ROUNDS``); its request state counts the rounds. A sampling request holds
``messages`` messages of ``chars`` characters each, when given.

python chain_asker_upstream.py
"""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import warnings

import anyio
from mcp import MCPDeprecationWarning
from mcp.server import Server, ServerRequestContext
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    CreateMessageRequest,
    CreateMessageRequestParams,
    ElicitRequest,
    ElicitRequestFormParams,
    InputRequiredResult,
    ListRootsRequest,
    ListToolsResult,
    PaginatedRequestParams,
    SamplingMessage,
    TextContent,
    Tool,
    ToolAnnotations,
)

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
MAX_ROUNDS = 100
SCHEMA = {"type": "object", "properties": {"word": {"type": "string"}}}
ARGS = {"per_round": {"type": "integer"}, "kind": {"type": "string"}, "messages": {"type": "integer"},
        "chars": {"type": "integer"}}
TOOLS = [Tool(name="ask_chain", description="asks again on every continuation",
              input_schema={"type": "object", "properties": ARGS},
              annotations=ToolAnnotations(read_only_hint=True))]


def request(kind: str, n: int, messages: int = 1, chars: int = 0) -> object:
    if kind == "sampling":  # ``messages`` of ``chars`` characters each (or a short one)
        said = SamplingMessage(role="user", content=TextContent(type="text", text="x" * chars or f"say {n}"))
        params = CreateMessageRequestParams(messages=[said] * messages, max_tokens=5)
        return CreateMessageRequest(params=params)
    if kind == "roots":
        return ListRootsRequest()
    return ElicitRequest(params=ElicitRequestFormParams(message=f"question {n}", requested_schema=SCHEMA))


def build_server() -> Server:
    async def list_tools(ctx: ServerRequestContext, params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=TOOLS)

    async def call_tool(
        ctx: ServerRequestContext, params: CallToolRequestParams
    ) -> CallToolResult | InputRequiredResult:
        args = params.arguments or {}
        per_round, kind = int(args.get("per_round", 1)), str(args.get("kind", "elicitation"))
        done = int(params.request_state or 0)
        if done >= MAX_ROUNDS:
            return CallToolResult(content=[TextContent(type="text", text=f"answered {done} rounds")])
        size = int(args.get("messages", 1)), int(args.get("chars", 0))
        asked = {f"q{done}_{i}": request(kind, done * per_round + i, *size) for i in range(per_round)}
        return InputRequiredResult(input_requests=asked, request_state=str(done + 1))  # type: ignore[arg-type]

    return Server("chain", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    from mcp.server.stdio import stdio_server

    async def main() -> None:
        server = build_server()
        async with stdio_server() as (r, w):
            await server.run(r, w, server.create_initialization_options())

    anyio.run(main)
