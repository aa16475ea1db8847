"""A lean 2026-07-28 ``tools/call`` (``app/lean_calls.py``) gets a context of its own, never one an earlier
request left behind: its principal, its request, and a connection whose ``state`` and exit stack are new.

Issue 21 asked whether the kernel context of the plain 2026 call could be built once per session and
reused (hp-http9). It cannot be shared: the connection carries per-connection state
(``session_tables.connection_key`` numbers it in ``state``, ``on_end`` pushes its tables' cleanup on its
exit stack, which the lean path unwinds when the call ends), so a shared one would hand the second caller
the first caller's key and cleanups. These tests fail for any such cache: two callers (one principal, then
another) send byte-for-byte the same envelope, one after the other and at once."""

from __future__ import annotations

import json
from typing import Any

import anyio
from mcp.server import Server, ServerRequestContext
from mcp.types import CallToolRequestParams, CallToolResult, TextContent

from sentinel_mcp.app.lean_calls import MESSAGE_KEY, LeanCalls
from sentinel_mcp.identity.principal import OWNER, Principal
from sentinel_mcp.identity.resolver import SCOPE_KEY

OTHER = Principal("other", "token")
MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}
HEADERS = [(b"host", b"127.0.0.1:8931"), (b"content-type", b"application/json"),
           (b"accept", b"application/json, text/event-stream"), (b"mcp-protocol-version", MODERN.encode()),
           (b"mcp-method", b"tools/call"), (b"mcp-name", b"look")]


def recording_server(seen: list[dict[str, Any]], ended: list[int], hold: anyio.Event | None = None) -> Server:
    async def call_tool(ctx: ServerRequestContext, params: CallToolRequestParams) -> CallToolResult:
        connection = ctx.session._connection  # type: ignore[attr-defined]
        n = len(seen)
        seen.append({"connection": connection, "state": dict(connection.state),
                     "principal": ctx.request.scope[SCOPE_KEY], "request": ctx.request,  # type: ignore[union-attr]
                     "ended before": list(ended)})
        connection.state["mark"] = n  # what a per-connection table leaves (session_tables.connection_key)

        async def end() -> None:
            ended.append(n)

        connection.exit_stack.push_async_callback(end)  # as session_tables.on_end registers a cleanup
        if hold is not None:
            await hold.wait()
        return CallToolResult(content=[TextContent(type="text", text=str(n))])

    return Server("recording", version="1", on_call_tool=call_tool)


async def post(app: LeanCalls, principal: Principal, rid: int) -> tuple[int, dict[str, Any]]:
    message = {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
               "params": {"name": "look", "arguments": {}, "_meta": dict(META)}}
    scope: dict[str, Any] = {"type": "http", "method": "POST", "path": "/mcp", "headers": list(HEADERS),
                             MESSAGE_KEY: message, SCOPE_KEY: principal}
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": json.dumps(message).encode(), "more_body": False}

    async def send(msg: dict[str, Any]) -> None:
        sent.append(msg)

    await app(scope, receive, send)
    return sent[0]["status"], json.loads(sent[1]["body"])


def lean_app(server: Server) -> LeanCalls:
    async def not_lean(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError("the call went to the SDK: the lean path did not take it")

    return LeanCalls(not_lean, target=lambda: (server, None, lambda name, scope: None))


async def test_each_lean_call_has_its_own_connection_state_and_exit_stack() -> None:
    seen: list[dict[str, Any]] = []
    ended: list[int] = []
    app = lean_app(recording_server(seen, ended))
    for rid, who in enumerate((OWNER, OWNER, OTHER, OWNER)):
        status, answer = await post(app, who, rid)
        assert status == 200 and answer["result"]["content"][0]["text"] == str(rid), answer
    assert [s["principal"] for s in seen] == [OWNER, OWNER, OTHER, OWNER]
    assert len({id(s["connection"]) for s in seen}) == 4  # (all four still held by ``seen``: no id reused)
    assert len({id(s["request"]) for s in seen}) == 4
    assert all(s["state"] == {} for s in seen)  # nothing an earlier call left in its connection's state
    # each call's cleanups ran when that call ended, before the next began, once each
    assert [s["ended before"] for s in seen] == [[], [0], [0, 1], [0, 1, 2]]
    assert ended == [0, 1, 2, 3]


async def test_calls_at_once_from_two_principals_share_no_context() -> None:
    seen: list[dict[str, Any]] = []
    ended: list[int] = []
    hold = anyio.Event()
    app = lean_app(recording_server(seen, ended, hold))
    answers: list[tuple[int, dict[str, Any]]] = []

    async def one(who: Principal, rid: int) -> None:
        answers.append(await post(app, who, rid))

    async with anyio.create_task_group() as tg:
        tg.start_soon(one, OWNER, 1)
        tg.start_soon(one, OTHER, 2)
        while len(seen) < 2:  # both inside the handler at once, neither answered yet
            await anyio.sleep(0)
        hold.set()
    assert sorted(s["principal"].name for s in seen) == sorted((OWNER.name, OTHER.name))
    assert seen[0]["connection"] is not seen[1]["connection"]
    assert seen[0]["state"] == seen[1]["state"] == {}
    assert sorted(ended) == [0, 1] and all(status == 200 for status, _ in answers)
