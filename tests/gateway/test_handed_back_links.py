"""Two more links of a call's await chain hand the next link's awaitable back instead of awaiting it in a
coroutine of their own (issue 21: under load a call's task is suspended and resumed at each audit row's
commit, and every resumption runs through each awaiting coroutine's frame): the ``WireGuard``'s check of a
parsed message, and the ``one_handshake`` middleware. What each did stays: its refusals answered (or raised
where the chain is awaited), the principal and the parsed message in the scope. (``CallerGuard`` stays a
coroutine function: apps and tests serve it as uvicorn's outermost app, which uvicorn's "auto" interface
would take for ASGI 2 from a plain ``__call__``.)

The chain is read from the inner app itself: the frames between it and the test's own coroutine."""

from __future__ import annotations

import asyncio
import json
import sys
from types import SimpleNamespace
from typing import Any

import pytest
from mcp.server.runner import _apply_middleware
from mcp.shared.exceptions import MCPError

from sentinel_mcp.app.http_app import CallerGuard
from sentinel_mcp.gateway.one_handshake import one_handshake
from sentinel_mcp.gateway.wire_guard import WireGuard
from sentinel_mcp.identity.principal import Principal
from sentinel_mcp.identity.resolver import SCOPE_KEY, Authenticator, TokenResolver

TOKEN = "t-" + "a" * 40
PORT = 8765
CALL = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                   "params": {"name": "noop", "arguments": {}}}).encode()


def _guard(inner: Any) -> CallerGuard:
    tokens = TokenResolver()
    tokens.add(Principal("alice", "token"), token=TOKEN)
    return CallerGuard(inner, bind_host="127.0.0.1", port=PORT, auth=Authenticator([tokens]))


def _scope(**change: Any) -> dict[str, Any]:
    headers = {b"host": f"127.0.0.1:{PORT}".encode(), b"authorization": f"Bearer {TOKEN}".encode(),
               b"content-type": b"application/json", b"accept": b"application/json, text/event-stream"}
    headers.update(change.pop("headers", {}))
    scope = {"type": "http", "method": "POST", "path": "/mcp", "scheme": "http", "query_string": b"",
             "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", PORT),
             "headers": [(k, v) for k, v in headers.items() if v is not None]}
    scope.update(change)
    return scope


class _Inner:
    """An inner ASGI app: notes the coroutine frames awaiting it (up to the test's driver), then answers,
    suspending once between the two (as a call does at its audit rows)."""

    def __init__(self) -> None:
        self.chains: list[list[str]] = []
        self.scopes: list[Any] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.scopes.append(scope)
        self.chains.append(_awaiting(sys._getframe(0)))
        await receive()
        await asyncio.sleep(0)
        self.chains.append(_awaiting(sys._getframe(0)))
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})


def _awaiting(frame: Any) -> list[str]:
    names = []
    f = frame.f_back
    while f is not None and f.f_code.co_name != "_drive":
        names.append(f.f_code.co_qualname)
        f = f.f_back
    return names


async def _drive(app: Any, scope: dict[str, Any], body: bytes = CALL) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []
    given = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        return given.pop() if given else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent


def test_a_guarded_call_runs_under_the_body_reader_alone() -> None:
    async def main() -> None:
        inner = _Inner()
        sent = await _drive(_guard(WireGuard(inner)), _scope())
        assert sent[0]["status"] == 200
        # before: WireGuard._checked between them too (resumed at every wake)
        expected = ["WireGuard.__call__", "CallerGuard.__call__"]
        assert inner.chains == [expected, expected]
        assert inner.scopes[0][SCOPE_KEY].name == "alice"
        assert json.loads(CALL) == inner.scopes[0]["sentinel.message"]

    asyncio.run(main())


@pytest.mark.parametrize("what,change,status", [
    ("no credential", {"headers": {b"authorization": None}}, 401),
    ("a wrong token", {"headers": {b"authorization": b"Bearer t-" + b"b" * 40}}, 401),
    ("a foreign Host", {"headers": {b"host": b"evil.example"}}, 421),
    ("a foreign Origin", {"headers": {b"origin": b"http://evil.example"}}, 403),
    ("Host sent twice", {"headers": {b"host": f"127.0.0.1:{PORT}".encode()}, "twice": b"host"}, 400),
    ("a socket at an HTTP path", {"type": "websocket", "path": "/mcp"}, 404),
])
def test_caller_refusals_are_still_answered(what: str, change: dict[str, Any], status: int) -> None:
    async def main() -> None:
        inner = _Inner()
        twice = change.pop("twice", None)
        scope = _scope(**change)
        if twice is not None:
            scope["headers"] += [(twice, v) for k, v in scope["headers"] if k == twice]
        if scope["type"] == "websocket":
            scope["extensions"] = {"websocket.http.response": {}}
        sent = await _drive(_guard(WireGuard(inner)), scope)
        assert inner.scopes == [], what  # never reached
        start = sent[0]
        assert start.get("status") == status, (what, sent)

    asyncio.run(main())


@pytest.mark.parametrize("body,code", [
    (b"{not json", -32700),  # a parse error
    (b'{"jsonrpc":"2.0","id":1}', -32600),  # neither request nor answer
    # an initialize refused before the SDK opens a session
    (json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": 5}}).encode(), None),
])
def test_a_message_the_wire_check_refuses_is_answered_and_never_reaches_the_app(body: bytes,
                                                                                code: int | None) -> None:
    async def main() -> None:
        inner = _Inner()
        sent = await _drive(_guard(WireGuard(inner)), _scope(), body)
        assert inner.scopes == []
        assert sent[0]["status"] >= 400
        answer = json.loads(b"".join(m.get("body", b"") for m in sent[1:]))
        assert "error" in answer
        if code is not None:
            assert answer["error"]["code"] == code

    asyncio.run(main())


def test_an_inner_error_reaches_the_awaiter_unchanged_and_the_held_bytes_are_given_back() -> None:
    async def main() -> None:
        error = RuntimeError("inner broke")

        async def broken(scope: Any, receive: Any, send: Any) -> None:
            await asyncio.sleep(0)
            raise error

        wire = WireGuard(broken)
        with pytest.raises(RuntimeError) as caught:
            await _drive(_guard(wire), _scope())
        assert caught.value is error
        assert wire.bodies.held("alice") == 0

    asyncio.run(main())


def _ctx(method: str, version: str = "2025-06-18", rid: Any = 1, initialized: bool = True) -> Any:
    return SimpleNamespace(method=method, protocol_version=version, request_id=rid,
                           session=SimpleNamespace(client_params=object() if initialized else None))


def test_one_handshake_hands_the_next_links_awaitable_back() -> None:
    async def main() -> None:
        made: list[Any] = []

        def call_next(ctx: Any) -> Any:
            async def run() -> str:
                return "answered"

            made.append(run())
            return made[-1]

        handed = _apply_middleware(one_handshake, call_next, _ctx("tools/call"))  # type: ignore[arg-type]
        assert handed is made[0]
        assert await handed == "answered"

    asyncio.run(main())


@pytest.mark.parametrize("rid", [1, "a", 0])
def test_a_second_initialize_is_still_refused_where_the_chain_is_awaited(rid: Any) -> None:
    async def main() -> None:
        ran: list[Any] = []

        async def call_next(ctx: Any) -> Any:
            ran.append(ctx)

        async def chain() -> Any:
            return await _apply_middleware(one_handshake, call_next, _ctx("initialize", rid=rid))  # type: ignore[arg-type]

        with pytest.raises(MCPError, match="already initialized"):
            await chain()
        assert ran == []
        # the first initialize, and one on a 2026-era connection (the SDK's to refuse), run the chain
        await _apply_middleware(one_handshake, call_next, _ctx("initialize", initialized=False))  # type: ignore[arg-type]
        await _apply_middleware(one_handshake, call_next, _ctx("initialize", version="2026-07-28"))  # type: ignore[arg-type]
        assert len(ran) == 2

    asyncio.run(main())
