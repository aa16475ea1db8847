"""The server the official MCP conformance suite scores (its server scenarios name these tools, resources and
prompts), written for these tests on the mcp SDK's low-level ``Server``.

It asks its client the way an upstream in the wild does:
- ``--asks push`` (default): by pushed requests (``elicitation/create``, ``sampling/createMessage``) in the
middle
  of the call, whatever era the connection speaks, like servers written for the handshake era;
- ``--asks portable``: pushed on handshake connections, ``InputRequiredResult`` on 2026-07-28 connections.

Run: python conformance_server.py PORT [--asks push|portable]        (streamable HTTP at /mcp)
"""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import argparse
import itertools
import json
import warnings
from typing import Any

import anyio
import uvicorn
from mcp import MCPDeprecationWarning
from mcp.server import Server, ServerRequestContext
from mcp.server.streamable_http import EventCallback, EventMessage, EventStore
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.types import (
    AudioContent,
    CallToolRequestParams,
    CallToolResult,
    CompleteRequestParams,
    CompleteResult,
    Completion,
    CreateMessageRequest,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    EmbeddedResource,
    EmptyResult,
    GetPromptRequestParams,
    GetPromptResult,
    ImageContent,
    InputRequiredResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    PaginatedRequestParams,
    Prompt,
    PromptArgument,
    PromptMessage,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    SamplingMessage,
    SetLevelRequestParams,
    SubscribeRequestParams,
    TextContent,
    TextResourceContents,
    BlobResourceContents,
    Tool,
    ToolAnnotations,
    UnsubscribeRequestParams,
)
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
RO = ToolAnnotations(read_only_hint=True)  # none of these tools changes anything

NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}}
TOOLS = [
    Tool(name="test_simple_text", description="Returns simple text", input_schema=NO_ARGS, annotations=RO),
    Tool(name="test_image_content", description="Returns an image", input_schema=NO_ARGS, annotations=RO),
    Tool(name="test_audio_content", description="Returns audio", input_schema=NO_ARGS, annotations=RO),
    Tool(
        name="test_embedded_resource",
        description="Returns an embedded resource",
        input_schema=NO_ARGS,
        annotations=RO,
    ),
    Tool(
        name="test_multiple_content_types",
        description="Returns text, image and resource",
        input_schema=NO_ARGS,
        annotations=RO,
    ),
    Tool(
        name="test_tool_with_logging",
        description="Logs three lines while it runs",
        input_schema=NO_ARGS,
        annotations=RO,
    ),
    Tool(
        name="test_tool_with_progress",
        description="Reports progress three times",
        input_schema=NO_ARGS,
        annotations=RO,
    ),
    Tool(name="test_error_handling", description="Always fails", input_schema=NO_ARGS, annotations=RO),
    Tool(
        name="test_sampling",
        description="Asks the client's model",
        annotations=RO,
        input_schema={"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]},
    ),
    Tool(
        name="test_elicitation",
        description="Asks the user",
        annotations=RO,
        input_schema={
            "type": "object",
            "properties": {"message": {"type": "string"}},
            "required": ["message"],
        },
    ),
    Tool(
        name="test_elicitation_sep1034_defaults",
        description="Asks with defaults",
        input_schema=NO_ARGS,
        annotations=RO,
    ),
    Tool(
        name="test_elicitation_sep1330_enums",
        description="Asks with enum variants",
        input_schema=NO_ARGS,
        annotations=RO,
    ),
    Tool(
        name="test_reconnection",
        description="Closes its SSE stream mid-call",
        input_schema=NO_ARGS,
        annotations=RO,
    ),
    Tool(
        name="json_schema_2020_12_tool",
        description="Tool with JSON Schema 2020-12 features",
        annotations=RO,
        input_schema={
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
                }
            },
            "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
            "additionalProperties": False,
        },
    ),
]

ELICIT_USER = {
    "type": "object",
    "required": ["username", "email"],
    "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    },
}
ELICIT_DEFAULTS = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
}
ELICIT_ENUMS = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
}
QUESTIONS = {
    "test_elicitation": ELICIT_USER,
    "test_elicitation_sep1034_defaults": ELICIT_DEFAULTS,
    "test_elicitation_sep1330_enums": ELICIT_ENUMS,
}


def text(value: str, *, error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=value)], is_error=error)


class ConformanceServer:
    def __init__(self, asks: str) -> None:
        self.asks = asks
        self.subscriptions: set[str] = set()
        self.server = Server(
            "sentinel-conformance-fixture",
            version="1.0",
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
            on_list_resources=self.list_resources,
            on_list_resource_templates=self.list_templates,
            on_read_resource=self.read_resource,
            on_subscribe_resource=self.subscribe,
            on_unsubscribe_resource=self.unsubscribe,
            on_list_prompts=self.list_prompts,
            on_get_prompt=self.get_prompt,
            on_completion=self.complete,
            on_set_logging_level=self.set_level,
            on_subscriptions_listen=ListenHandler(InMemorySubscriptionBus()),
        )  # 2026 clients subscribe here

    # ------------------------------------------------------------------ tools
    async def list_tools(
        self, ctx: ServerRequestContext, params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=TOOLS)

    def _by_input(self, ctx: ServerRequestContext) -> bool:
        return self.asks == "portable" and ctx.protocol_version in MODERN_PROTOCOL_VERSIONS

    async def call_tool(
        self, ctx: ServerRequestContext, params: CallToolRequestParams
    ) -> CallToolResult | InputRequiredResult:
        name, args = params.name, params.arguments or {}
        if name == "test_simple_text":
            return text("This is a simple text response for testing.")
        if name == "test_image_content":
            return CallToolResult(content=[ImageContent(type="image", data=PNG, mime_type="image/png")])
        if name == "test_audio_content":
            return CallToolResult(content=[AudioContent(type="audio", data=WAV, mime_type="audio/wav")])
        if name == "test_embedded_resource":
            return CallToolResult(
                content=[
                    EmbeddedResource(
                        type="resource",
                        resource=TextResourceContents(
                            uri="test://embedded-resource",
                            mime_type="text/plain",
                            text="This is an embedded resource content.",
                        ),
                    )
                ]
            )
        if name == "test_multiple_content_types":
            return CallToolResult(
                content=[
                    TextContent(type="text", text="Multiple content types test:"),
                    ImageContent(type="image", data=PNG, mime_type="image/png"),
                    EmbeddedResource(
                        type="resource",
                        resource=TextResourceContents(
                            uri="test://mixed-content-resource",
                            mime_type="application/json",
                            text='{"test":"data","value":123}',
                        ),
                    ),
                ]
            )
        if name == "test_tool_with_logging":
            for i, line in enumerate(
                ("Tool execution started", "Tool processing data", "Tool execution completed")
            ):
                if i:
                    await anyio.sleep(0.05)
                await ctx.session.send_log_message(
                    "info", line, logger="conformance", related_request_id=ctx.request_id
                )
            return text("Tool with logging executed successfully")
        if name == "test_tool_with_progress":
            for step in (0, 50, 100):
                await ctx.session.report_progress(step, 100, f"Completed step {step} of 100")
                await anyio.sleep(0.05)
            return text("progress reported")
        if name == "test_error_handling":
            return text("This tool intentionally returns an error for testing", error=True)
        if name == "test_sampling":
            return await self._sample(ctx, params, str(args.get("prompt", "")))
        if name in QUESTIONS:
            return await self._elicit(
                ctx, params, name, str(args.get("message") or "Please provide the values")
            )
        if name == "test_reconnection":
            await ctx.session.send_log_message("info", "Before disconnect", related_request_id=ctx.request_id)
            if ctx.close_sse_stream is not None:
                await ctx.close_sse_stream()
            await anyio.sleep(0.2)
            await ctx.session.send_log_message("info", "After reconnect", related_request_id=ctx.request_id)
            return text("Reconnection test completed")
        if name == "json_schema_2020_12_tool":
            return text(json.dumps(args))
        return text(f"unknown tool {name}", error=True)

    async def _sample(
        self, ctx: ServerRequestContext, params: CallToolRequestParams, prompt: str
    ) -> CallToolResult | InputRequiredResult:
        message = SamplingMessage(role="user", content=TextContent(type="text", text=prompt))
        if self._by_input(ctx):
            answer = (params.input_responses or {}).get("sample")
            if answer is None:
                return InputRequiredResult(
                    input_requests={
                        "sample": CreateMessageRequest(
                            params=CreateMessageRequestParams(messages=[message], max_tokens=100)
                        )
                    },
                    request_state="s1",
                )
            result = CreateMessageResult.model_validate(answer) if isinstance(answer, dict) else answer
        else:
            try:
                result = await ctx.session.create_message(
                    [message], max_tokens=100, related_request_id=ctx.request_id
                )
            except Exception as e:  # noqa: BLE001 - the client cannot be asked: say so
                return text(f"sampling failed: {e}", error=True)
        reply = result.content.text if isinstance(result.content, TextContent) else "(no text)"
        return text(f"LLM response: {reply}")

    async def _elicit(
        self, ctx: ServerRequestContext, params: CallToolRequestParams, name: str, message: str
    ) -> CallToolResult | InputRequiredResult:
        schema = QUESTIONS[name]
        if self._by_input(ctx):
            answer = (params.input_responses or {}).get("ask")
            if answer is None:
                return InputRequiredResult(
                    input_requests={
                        "ask": ElicitRequest(
                            params=ElicitRequestFormParams(message=message, requested_schema=schema)
                        )
                    },
                    request_state="e1",
                )
            result = ElicitResult.model_validate(answer) if isinstance(answer, dict) else answer
        else:
            try:
                result = await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)
            except Exception as e:  # noqa: BLE001
                return text(f"elicitation failed: {e}", error=True)
        return text(
            f"Elicitation completed: action={result.action}, content={json.dumps(result.content or {})}"
        )

    # ------------------------------------------------------------------ resources
    async def list_resources(
        self, ctx: ServerRequestContext, params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        return ListResourcesResult(
            resources=[
                Resource(uri="test://static-text", name="static-text", mime_type="text/plain"),
                Resource(uri="test://static-binary", name="static-binary", mime_type="image/png"),
                Resource(uri="test://watched-resource", name="watched-resource", mime_type="text/plain"),
            ]
        )

    async def list_templates(
        self, ctx: ServerRequestContext, params: PaginatedRequestParams | None
    ) -> ListResourceTemplatesResult:
        return ListResourceTemplatesResult(
            resource_templates=[
                ResourceTemplate(
                    uri_template="test://template/{id}/data", name="template", mime_type="application/json"
                )
            ]
        )

    async def read_resource(
        self, ctx: ServerRequestContext, params: ReadResourceRequestParams
    ) -> ReadResourceResult:
        uri = params.uri
        if uri == "test://static-text":
            contents: Any = TextResourceContents(
                uri=uri, mime_type="text/plain", text="This is the content of the static text resource."
            )
        elif uri == "test://static-binary":
            contents = BlobResourceContents(uri=uri, mime_type="image/png", blob=PNG)
        elif uri == "test://watched-resource":
            contents = TextResourceContents(uri=uri, mime_type="text/plain", text="Watched resource content")
        elif uri.startswith("test://template/") and uri.endswith("/data"):
            ident = uri.removeprefix("test://template/").removesuffix("/data")
            contents = TextResourceContents(
                uri=uri,
                mime_type="application/json",
                text=json.dumps({"id": ident, "templateTest": True, "data": f"Data for ID: {ident}"}),
            )
        else:
            from mcp.shared.exceptions import MCPError

            raise MCPError(code=-32002, message=f"Resource not found: {uri}", data={"uri": uri})
        return ReadResourceResult(contents=[contents])

    async def subscribe(self, ctx: ServerRequestContext, params: SubscribeRequestParams) -> EmptyResult:
        self.subscriptions.add(params.uri)
        return EmptyResult()

    async def unsubscribe(self, ctx: ServerRequestContext, params: UnsubscribeRequestParams) -> EmptyResult:
        self.subscriptions.discard(params.uri)
        return EmptyResult()

    # ------------------------------------------------------------------ prompts, completion, logging
    async def list_prompts(
        self, ctx: ServerRequestContext, params: PaginatedRequestParams | None
    ) -> ListPromptsResult:
        return ListPromptsResult(
            prompts=[
                Prompt(name="test_simple_prompt", description="A simple prompt without arguments"),
                Prompt(
                    name="test_prompt_with_arguments",
                    description="A prompt with required arguments",
                    arguments=[
                        PromptArgument(name="arg1", required=True),
                        PromptArgument(name="arg2", required=True),
                    ],
                ),
                Prompt(
                    name="test_prompt_with_embedded_resource",
                    description="A prompt with an embedded resource",
                    arguments=[PromptArgument(name="resourceUri", required=True)],
                ),
                Prompt(name="test_prompt_with_image", description="A prompt with an image"),
            ]
        )

    async def get_prompt(self, ctx: ServerRequestContext, params: GetPromptRequestParams) -> GetPromptResult:
        args = params.arguments or {}
        if params.name == "test_simple_prompt":
            msgs = [
                PromptMessage(
                    role="user", content=TextContent(type="text", text="This is a simple prompt for testing.")
                )
            ]
        elif params.name == "test_prompt_with_arguments":
            msgs = [
                PromptMessage(
                    role="user",
                    content=TextContent(
                        type="text",
                        text=f"Prompt with arguments: arg1='{args.get('arg1')}', arg2='{args.get('arg2')}'",
                    ),
                )
            ]
        elif params.name == "test_prompt_with_embedded_resource":
            msgs = [
                PromptMessage(
                    role="user",
                    content=EmbeddedResource(
                        type="resource",
                        resource=TextResourceContents(
                            uri=args.get("resourceUri", "test://example-resource"),
                            mime_type="text/plain",
                            text="Embedded resource content for testing.",
                        ),
                    ),
                ),
                PromptMessage(
                    role="user",
                    content=TextContent(type="text", text="Please process the embedded resource above."),
                ),
            ]
        elif params.name == "test_prompt_with_image":
            msgs = [
                PromptMessage(
                    role="user", content=ImageContent(type="image", data=PNG, mime_type="image/png")
                ),
                PromptMessage(
                    role="user", content=TextContent(type="text", text="Please analyze the image above.")
                ),
            ]
        else:
            from mcp.shared.exceptions import MCPError

            raise MCPError(code=-32602, message=f"unknown prompt {params.name}")
        return GetPromptResult(messages=msgs)

    async def complete(self, ctx: ServerRequestContext, params: CompleteRequestParams) -> CompleteResult:
        words = ["paris", "park", "party"]
        value = params.argument.value
        return CompleteResult(
            completion=Completion(
                values=[w for w in words if w.startswith(value)], total=None, has_more=False
            )
        )

    async def set_level(self, ctx: ServerRequestContext, params: SetLevelRequestParams) -> EmptyResult:
        return EmptyResult()


class MemoryEventStore(EventStore):
    """Resumability for SSE polling (bounded: the oldest events are dropped)."""

    def __init__(self, limit: int = 10_000) -> None:
        self.events: list[tuple[str, str, Any]] = []
        self.ids = itertools.count(1)
        self.limit = limit

    async def store_event(self, stream_id: str, message: Any) -> str:
        event_id = str(next(self.ids))
        self.events.append((stream_id, event_id, message))
        del self.events[: -self.limit]
        return event_id

    async def replay_events_after(self, last_event_id: str, send_callback: EventCallback) -> str | None:
        stream = next((s for s, e, _ in self.events if e == last_event_id), None)
        if stream is None:
            return None
        for s, e, message in self.events:
            if s == stream and int(e) > int(last_event_id) and message is not None:
                await send_callback(EventMessage(message, e))
        return stream


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("--asks", choices=["push", "portable"], default="push")
    args = parser.parse_args()
    app = ConformanceServer(args.asks).server.streamable_http_app(
        event_store=MemoryEventStore(), retry_interval=100, host="127.0.0.1"
    )
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    main()
