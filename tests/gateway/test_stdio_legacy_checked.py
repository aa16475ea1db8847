"""A handshake-era ``tools/call`` on the stdio lean path (``StdioLeanCalls._serve_legacy``) whose params the
SDK's surface check is sure to accept (``plain_calls.plain_handshake_params``) runs the kernel without that
check, as the 2025 HTTP session path does (``session_dispatch.handler_of``); any other params run the
runner's own ``on_request``, check and all. Either way the answer line is the one the runner's own
``on_request`` gives for the same params (the same result, or the same error), counted in process: the
surface check is run 0 times for plain params and once for the others.
"""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace
from typing import Any

import pytest
from mcp.server import Server, ServerRequestContext
from mcp.server.connection import Connection
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp_types import CallToolRequestParams, CallToolResult, ErrorData, JSONRPCError, TextContent
from mcp_types import methods

from sentinel_mcp.gateway import unspanned_kernel
from sentinel_mcp.gateway.stdio_lean_calls import StdioLeanCalls
from sentinel_mcp.gateway.unspanned_kernel import UnspannedRunner

VERSION = "2025-11-25"

# (params, plain): names and arguments of several JSON kinds; what is not plain goes through the SDK's check
CASES: list[tuple[dict[str, Any], bool]] = [
    ({"name": "echo", "arguments": {"text": "hi"}}, True),
    ({"name": "echo"}, True),
    ({"name": "", "arguments": {}}, True),
    ({"name": "h\u00e9llo \u2603", "arguments": {"n": 10 ** 30, "f": 1.5, "l": [None, True], "o": {}}}, True),
    ({"name": "echo", "arguments": None}, False),
    ({"name": "echo", "arguments": ["x"]}, False),
    ({"name": 7, "arguments": {}}, False),
    ({"name": "echo", "arguments": {}, "_meta": {"sentinel/purpose": "p"}}, False),
    ({"name": "echo", "arguments": {}, "task": {"ttl": 1}}, False),
    ({"arguments": {}}, False),
]


def server() -> Server:
    async def call_tool(ctx: ServerRequestContext, params: CallToolRequestParams) -> CallToolResult:
        said = json.dumps([params.name, params.arguments], sort_keys=True)
        return CallToolResult(content=[TextContent(type="text", text=said)], structured_content={"n": 1})

    return Server("legacy-checked", version="1", on_call_tool=call_tool)


def ready_connection() -> Connection:
    connection = Connection(None, protocol_version=VERSION)
    connection.initialized.set()
    return connection


def line_of(message: Any) -> str:
    return message.model_dump_json(by_alias=True, exclude_none=True)


async def through_the_runner(srv: Server, params: dict[str, Any]) -> Any:
    """The runner's own answer (its result, or its error as the lean path maps it), as a JSON value."""
    runner = UnspannedRunner(srv, ready_connection(), None)
    dctx = SimpleNamespace(request_id=1, message_metadata=None, transport=None)
    try:
        return {"result": await runner.on_request(dctx, "tools/call", params)}  # type: ignore[arg-type]
    except Exception as exc:  # noqa: BLE001 - compared below
        error = handler_exception_to_error_data(exc) or ErrorData(code=0, message=str(exc))
        return {"error": json.loads(line_of(JSONRPCError(jsonrpc="2.0", id=1, error=error)))["error"]}


async def through_the_lean_path(srv: Server, params: dict[str, Any], rid: int) -> Any:
    lines: list[str] = []
    calls = StdioLeanCalls(lambda: (srv, None))

    async def send_line(line: str) -> None:
        lines.append(line)

    async def ordered(line: str, rid: Any) -> None:
        lines.append(line)

    calls.bind(send_line, line_of, ordered)
    calls.modern = False
    dispatcher = SimpleNamespace(_in_flight={})
    calls.adopt(dispatcher, ready_connection())
    assert calls.take({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})
    await asyncio.wait(list(calls._tasks), timeout=30)
    assert len(lines) == 1 and dispatcher._in_flight == {}
    answer = json.loads(lines[0])
    assert answer["id"] == rid
    return {k: v for k, v in answer.items() if k in ("result", "error")}


@pytest.mark.parametrize("params,plain", CASES, ids=[json.dumps(c[0])[:60] for c in CASES])
async def test_plain_params_skip_only_the_surface_check_and_answer_as_the_runner(
    monkeypatch: pytest.MonkeyPatch, params: dict[str, Any], plain: bool
) -> None:
    monkeypatch.setattr(unspanned_kernel, "tracing_off", lambda: True)
    srv = server()
    checks: list[Any] = []
    check = methods.validate_client_request

    def counted(method: str, version: Any, given: Any) -> Any:
        if method == "tools/call":
            checks.append(given)
        return check(method, version, given)

    monkeypatch.setattr(methods, "validate_client_request", counted)
    lean = await through_the_lean_path(srv, json.loads(json.dumps(params)), 41)
    assert len(checks) == (0 if plain else 1), checks
    expected = await through_the_runner(srv, json.loads(json.dumps(params)))
    assert lean == expected
