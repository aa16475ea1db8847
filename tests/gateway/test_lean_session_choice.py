"""Which requests the lean 2025 path (app/lean_session_calls.py) takes, and the parts it runs on: the common
``tools/call`` only (every unusual POST goes to the SDK), the SDK's own Accept rule, a transport in the SDK's
usual state, and the watcher that keeps a lean stream alive and notices a client that left. No gateway runs
here; ``test_lean_session_calls.py`` drives the path over real HTTP.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from sentinel_mcp.app.lean_calls import _accepts_json_and_sse
from sentinel_mcp.app.lean_session_calls import _lean_request
from tests.gateway.test_lean_session_calls import ACCEPT, VERSION, tool_call


def _scope(headers: list[tuple[str, str]], path: str = "/mcp", method: str = "POST") -> dict[str, Any]:
    return {"type": "http", "path": path, "method": method,
            "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers]}


MESSAGE = tool_call(1, "tb__echo", {"text": "x"})
GOOD = [("content-type", "application/json"), ("accept", ACCEPT), ("mcp-session-id", "ab" * 16),
        ("mcp-protocol-version", VERSION)]


@pytest.mark.parametrize("label,headers,message,path,method", [
    ("no session", GOOD[:2] + GOOD[3:], MESSAGE, "/mcp", "POST"),
    ("GET", GOOD, MESSAGE, "/mcp", "GET"),
    ("other path", GOOD, MESSAGE, "/mcpx", "POST"),
    ("notification", GOOD, {"jsonrpc": "2.0", "method": "tools/call", "params": {}}, "/mcp", "POST"),
    ("other method", GOOD, {**MESSAGE, "method": "tools/list"}, "/mcp", "POST"),
    ("initialize", GOOD, {**MESSAGE, "method": "initialize"}, "/mcp", "POST"),
    ("a list", GOOD, [MESSAGE], "/mcp", "POST"),
    ("a text", GOOD, "tools/call", "/mcp", "POST"),
    ("progress token", GOOD, tool_call(1, "x", {}, via_sdk=True), "/mcp", "POST"),
    ("content type twice", GOOD + [("content-type", "application/json")], MESSAGE, "/mcp", "POST"),
    ("accept twice", GOOD + [("accept", ACCEPT)], MESSAGE, "/mcp", "POST"),
    ("no content type", [GOOD[1], *GOOD[2:]], MESSAGE, "/mcp", "POST"),
    ("no accept", [GOOD[0], *GOOD[2:]], MESSAGE, "/mcp", "POST"),
    ("json with junk", [("content-type", "application/jsonx"), *GOOD[1:]], MESSAGE, "/mcp", "POST"),
    ("modern version", GOOD[:3] + [("mcp-protocol-version", "2026-07-28")], MESSAGE, "/mcp", "POST"),
    ("empty version", GOOD[:3] + [("mcp-protocol-version", "")], MESSAGE, "/mcp", "POST"),
    ("last event id", GOOD + [("last-event-id", "1")], MESSAGE, "/mcp", "POST"),
])
def test_only_the_common_call_is_taken(label: str, headers: Any, message: Any, path: str,
                                       method: str) -> None:
    assert _lean_request(_scope(headers, path, method), message) is None, label


def test_the_common_call_is_taken() -> None:
    assert _lean_request(_scope(GOOD), MESSAGE) == ("ab" * 16, VERSION)
    assert _lean_request(_scope(GOOD[:3]), MESSAGE) == ("ab" * 16, "2025-03-26")
    # the SDK's two Content-Type checks both passed this one (a prefix, then one of the comma's parts); only
    # the canonical header is taken now (WireGuard answers any other 415 and writes the one it takes so)
    for spelled in ("application/json-seq, application/json", "Application/JSON",
                    "application/json; charset=utf-8"):
        assert _lean_request(_scope([("content-type", spelled), *GOOD[1:]]), MESSAGE) is None, spelled


@pytest.mark.parametrize("accept,expected", [
    ("application/json, text/event-stream", True), ("*/*", True), ("application/*, text/*", True),
    ("application/json;q=0.9, text/event-stream;q=0.1", True), ("application/json", False),
    ("text/event-stream", False), ("", False), ("application/jsonx, text/event-streamx", False),
])
def test_the_accept_rule_is_the_sdks(accept: str, expected: bool) -> None:
    from mcp.server.streamable_http import check_accept_headers
    from starlette.requests import Request

    sdk = check_accept_headers(Request(_scope([("accept", accept)])))
    assert _accepts_json_and_sse(accept) == expected == (sdk[0] and sdk[1])



async def test_only_a_transport_in_the_sdks_usual_state_is_used() -> None:
    from mcp.server.streamable_http import StreamableHTTPServerTransport
    from mcp.server.transport_security import TransportSecuritySettings

    from sentinel_mcp.app.lean_session_calls import _usable

    def transport(**kw: Any) -> StreamableHTTPServerTransport:
        made = StreamableHTTPServerTransport(mcp_session_id="ab" * 16, **kw)
        made._read_stream_writer = object()  # type: ignore[assignment]  # as connect() leaves it
        return made

    assert _usable(transport())
    assert not _usable(StreamableHTTPServerTransport(mcp_session_id="ab" * 16))  # not connected
    assert not _usable(transport(is_json_response_enabled=True))
    assert not _usable(transport(event_store=object()))  # type: ignore[arg-type]
    guarded = TransportSecuritySettings(enable_dns_rebinding_protection=True)
    assert not _usable(transport(security_settings=guarded))
    ended = transport()
    ended._terminated = True
    assert not _usable(ended)
    expiring = transport(idle_timeout=60)
    expiring.idle_scope = anyio.CancelScope()
    assert _usable(expiring)
    expiring.idle_scope.cancel()
    assert not _usable(expiring)


async def test_the_watcher_sends_the_head_then_ends_the_stream_when_the_client_leaves(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp.server.streamable_http import EventMessage

    from sentinel_mcp.app import lean_session_calls as lean

    monkeypatch.setattr(lean, "PING_SECONDS", 0.05)
    monkeypatch.setattr(lean, "WATCH_AFTER", 0.0)
    sent: list[dict[str, Any]] = []
    left = anyio.Event()

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def receive() -> dict[str, Any]:
        await left.wait()
        return {"type": "http.disconnect"}

    writer, reader = anyio.create_memory_object_stream[EventMessage](4)
    state = lean._Stream(send, reader, [(b"content-type", b"text/event-stream")])
    state.watch(receive)
    with anyio.fail_after(10):
        while sum(1 for m in sent if m.get("body", b"").startswith(b": ping - ")) < 2:
            await anyio.sleep(0.01)
        assert sent[0] == {"type": "http.response.start", "status": 200,
                           "headers": [(b"content-type", b"text/event-stream")]}
        left.set()
        with pytest.raises(anyio.ClosedResourceError):
            await reader.receive()  # the stream's wait is woken: no answer will be written
    assert state.aborted and state.active
    state.stop()
    writer.close()


def test_the_json_answer_is_the_sdks_response_head_and_body() -> None:
    """``json_answer``: the status, head (in order) and body of the SDK's ``_create_json_response`` for every
    message, its head kept per session; a session of another id gets its own head."""
    from mcp.server.streamable_http import StreamableHTTPServerTransport
    from mcp_types import ErrorData, JSONRPCError, JSONRPCResponse

    from sentinel_mcp.app.lean_session_calls import _JSON_HEADS, json_answer

    results: list[Any] = [
        {}, {"content": [{"type": "text", "text": "ok"}], "isError": False},
        {"content": [{"type": "text", "text": "\u00e9\u6f22 \U0001f600 \\ \" </script> \u2028"}],
         "structuredContent": {"result": [1, 2.5, None, True, -(10 ** 30)]}, "_meta": {"sentinel/s": "x"}},
        {"content": [{"type": "text", "text": "x" * 70_000}]}, {"nested": {"a": {"b": {"c": []}}}}]
    messages: list[Any] = [JSONRPCResponse(jsonrpc="2.0", id=rid, result=r)
                           for rid in (1, 0, -5, "s", "", "\u00e9") for r in results]
    messages += [JSONRPCError(jsonrpc="2.0", id=7, error=ErrorData(code=-32602, message="bad \u00e9")),
                 JSONRPCError(jsonrpc="2.0", id="e", error=ErrorData(code=-1, message="m", data={"a": [1]}))]
    for sid in ("ab" * 16, "0" * 40, None):
        transport = StreamableHTTPServerTransport(mcp_session_id=sid)
        for _ in range(2):  # the head made, then kept
            for message in messages:
                sdk = transport._create_json_response(message)
                assert json_answer(transport, message) == (sdk.status_code, sdk.raw_headers, sdk.body)
        assert transport in _JSON_HEADS
        assert json_answer(transport, None) == (200, transport._create_json_response(None).raw_headers, b"")
