"""What a lean 2026-07-28 HTTP ``tools/call`` builds and checks per request before ``Front.call_tool``,
timed piece by piece in process on a running loop (issue 21, hp-http9): the bound on what building those
layers once per session could save. Pieces: the head checks (``CallerGuard`` whole, with one token;
``WireGuard``'s media type and framing; ``LeanCalls``' head scan), the SDK's envelope ladder, the dispatch
context (``Headers``, ``Request``, ``TransportContext``, metadata, ``OneExchangeContext``), the plain
connection (``PlainCalls.connection``), the runner with the kernel's context and middleware chain, and the
whole kernel pass (``serve_call``) around a handler that returns a made result at once. Each: the thread's
CPU time, best of 7 x N, us an operation. Compare with the loop's CPU a call (``http_call_trace.py``).
Usage: python benchmarks/harness/lean_layer_pieces.py [--n 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any, Callable

from mcp.server import Server
from mcp.shared.inbound import classify_inbound_request
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp.types import CallToolResult, TextContent
from starlette.datastructures import Headers
from starlette.requests import Request

from sentinel_mcp.app.http_app import CallerGuard
from sentinel_mcp.app.lean_calls import _lean_request
from sentinel_mcp.app.one_exchange_context import OneExchangeContext
from sentinel_mcp.gateway.bounded_errors import bounded_errors
from sentinel_mcp.gateway.one_handshake import one_handshake
from sentinel_mcp.gateway.plain_calls import PlainCalls
from sentinel_mcp.gateway.unspanned_kernel import UnspannedRunner, serve_call
from sentinel_mcp.gateway.wire_guard import _declares_json, _framing_refusal
from sentinel_mcp.identity.principal import OWNER
from sentinel_mcp.identity.resolver import Authenticator, TokenResolver

TOKEN = "t" * 43
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "mcp-client", "version": "1.2.3"},
        "io.modelcontextprotocol/clientCapabilities": {"roots": {"listChanged": True}}}
ROUTING = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "noop"}
# a client's head as the front's parser leaves it (names lowered): the hot-path client's nine headers
HEAD = [(b"host", b"127.0.0.1:8931"), (b"accept", b"application/json, text/event-stream"),
        (b"content-type", b"application/json"), (b"mcp-protocol-version", b"2026-07-28"),
        (b"mcp-method", b"tools/call"), (b"mcp-name", b"noop"),
        (b"authorization", b"Bearer " + TOKEN.encode()), (b"content-length", b"260"),
        (b"user-agent", b"python-httpx/0.28")]


def best(f: Callable[[], Any], n: int) -> float:
    runs = []
    for _ in range(7):
        t = time.thread_time()
        for _ in range(n):
            f()
        runs.append((time.thread_time() - t) / n * 1e6)
    return min(runs)


def scope() -> dict[str, Any]:
    # fresh header objects a request, as the parser makes them (a cache's equality test compares bytes)
    return {"type": "http", "method": "POST", "path": "/mcp", "client": ("127.0.0.1", 50000),
            "headers": [(bytes(k), bytes(v)) for k, v in HEAD]}


async def main(n: int) -> None:
    tokens = TokenResolver()
    tokens.add(OWNER, token=TOKEN)

    async def inner_app(scope: Any, receive: Any, send: Any) -> None:
        return None

    guard = CallerGuard(inner_app, bind_host="127.0.0.1", port=8931, auth=Authenticator([tokens]))
    params = {"name": "noop", "arguments": {}, "_meta": dict(META)}
    message = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
    made = CallToolResult(content=[TextContent(type="text", text="ok")])

    async def call_tool(ctx: Any, p: Any) -> CallToolResult:
        return made

    server = Server("pieces", version="1", on_call_tool=call_tool)
    server.middleware = [one_handshake, bounded_errors]  # the front's two, its span left out (as served)
    plain = PlainCalls()

    async def receive() -> dict[str, Any]:
        return {}

    def caller_guard() -> None:
        step = guard(scope(), receive, receive)  # never awaits: the inner app returns at once
        try:
            step.send(None)
        except StopIteration:
            pass

    def dispatch_context() -> OneExchangeContext:
        s = scope()
        transport = TransportContext(kind="streamable-http", can_send_request=False, headers=Headers(scope=s))
        return OneExchangeContext(transport, 7, ServerMessageMetadata(request_context=Request(s, receive)))

    dctx = dispatch_context()
    connection = plain.connection(params)

    def runner_context_chain() -> None:
        runner = UnspannedRunner(server, connection, None)
        runner._make_context(dctx, "tools/call", params, dict(params["_meta"]), "2026-07-28")
        runner._compose_server_middleware(call_tool)

    def kernel_pass() -> None:
        step = serve_call(server, dctx, params, connection=plain.connection(params), lifespan_state=None,
                          checked=True)
        try:
            step.send(None)
        except StopIteration:
            pass

    pieces = {
        "CallerGuard (Host, Origin, token: SHA-256 and compare)": caller_guard,
        "WireGuard head (media type, framing)": lambda: (_declares_json(scope()), _framing_refusal(HEAD)),
        "LeanCalls head scan (_lean_request)": lambda: _lean_request(scope(), message),
        "SDK envelope ladder (classify_inbound_request)": lambda: classify_inbound_request(message,
                                                                                          headers=ROUTING),
        "dispatch context (Headers, Request, TransportContext, metadata)": dispatch_context,
        "plain connection (PlainCalls.connection)": lambda: plain.connection(params),
        "runner, kernel context, middleware chain": runner_context_chain,
        "whole kernel pass around a made result (serve_call)": kernel_pass,
        "(a fresh scope alone, in several rows above)": scope,
    }
    for label, piece in pieces.items():
        print(f"{best(piece, n):7.2f} us  {label}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20000)
    asyncio.run(main(ap.parse_args().n))
