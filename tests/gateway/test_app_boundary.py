"""No exception a request raises escapes to uvicorn's "Exception in ASGI application" handler (a whole
traceback in the log per request, a plain-text 500): the app's boundary catches it, logs one bounded line,
answers a JSON-RPC internal error on a JSON-RPC door (plain 500 elsewhere), cuts an answer already begun,
and closes a WebSocket with 1011. Real uvicorn with the front's HTTP protocol on 127.0.0.1."""

from __future__ import annotations

import asyncio
import logging
import socket
from typing import Any

import httpx2
import pytest
import uvicorn
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from sentinel_mcp.app.app_boundary import FAULT, AppBoundary
from sentinel_mcp.app.http_protocol import FrontHTTPProtocol
from tests.conftest import free_port

pytestmark = pytest.mark.timeout(60)
SECRET = "sk-live-0123456789" + "x" * 5000 + "\u202e"


async def faulty(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Fails in every way a request can: before its answer, midway through a streamed one, in a socket."""
    if scope["type"] == "lifespan":
        return
    if scope["type"] == "websocket":
        await receive()
        await send({"type": "websocket.accept"})
        raise RuntimeError("socket fault " + SECRET)
    path = scope["path"]
    if path == "/mcp" and scope["method"] == "POST":
        # as WireGuard leaves it
        scope["sentinel.message"] = {"jsonrpc": "2.0", "id": "r-1", "method": "ping"}
        raise KeyError("before the answer " + SECRET)
    if path == "/stream":
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")]})
        await send({"type": "http.response.body", "body": b"data: one\n\n", "more_body": True})
        raise ExceptionGroup("mid-answer", [ValueError(SECRET)])
    if path == "/plain":
        await send({"type": "http.response.start", "status": 405,
                    "headers": [(b"content-type", b"text/plain"), (b"allow", b"POST")]})
        await send({"type": "http.response.body", "body": b"Method Not Allowed"})
        return
    raise ValueError("elsewhere " + SECRET)


@pytest.fixture
async def served(caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.INFO)
    port = free_port()
    sock = socket.socket()
    sock.bind(("127.0.0.1", port))
    # log_config=None: uvicorn's loggers propagate to the root, where caplog reads them
    server = uvicorn.Server(uvicorn.Config(AppBoundary(faulty), log_config=None, lifespan="off",
                                           http=FrontHTTPProtocol))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
        sock.close()


async def test_nothing_escapes_to_uvicorn(served: str, caplog: pytest.LogCaptureFixture) -> None:
    async with httpx2.AsyncClient(timeout=10) as http:
        r = await http.post(served + "/mcp", json={"jsonrpc": "2.0", "id": "r-1", "method": "ping"})
        assert r.status_code == 500 and r.json() == {
            "jsonrpc": "2.0", "id": "r-1", "error": {"code": -32603, "message": "Internal error"}}, r.text
        assert SECRET[:10] not in r.text
        r = await http.get(served + "/elsewhere")
        assert r.status_code == 500 and r.text == "Internal Server Error"
        # a door's error answer in another shape is rewritten as JSON-RPC (headers kept); elsewhere it is not
        r = await http.get(served + "/plain")
        assert r.status_code == 405 and r.text == "Method Not Allowed"
        with pytest.raises(httpx2.HTTPError):  # begun, then cut: never taken for a whole answer
            async with http.stream("GET", served + "/stream") as stream:
                async for _ in stream.aiter_bytes():
                    pass
    with pytest.raises(ConnectionClosed) as closed:
        async with connect(served.replace("http", "ws") + "/ws") as ws:
            await ws.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1011
    await asyncio.sleep(0.2)  # uvicorn's own lines, if any, are written by now
    text = "\n".join(f"{r.name} {r.getMessage()}" for r in caplog.records)
    assert "Exception in ASGI application" not in text and "Traceback" not in text, text[:3000]
    assert "returned without" not in text, text[:3000]
    assert not any(r.exc_info for r in caplog.records)
    failures = [r for r in caplog.records if r.name == "sentinel_mcp.app.app_boundary"]
    assert len(failures) == 4, [r.getMessage()[:200] for r in failures]
    for record in failures:  # one bounded line each, the outside text marked
        line = record.getMessage()
        assert "\n" not in line and len(line) < 700 and "\u202e" not in line, line[:800]
        assert "sk-live-0123456789" in line  # the fault is said (its start), not hidden
        assert line.startswith(FAULT) and " at test_app_boundary.py:" in line  # and where it was raised
    assert "ExceptionGroup of ValueError" in "\n".join(r.getMessage() for r in failures)


async def test_a_door_answer_in_another_shape_is_json_rpc() -> None:
    """405 in plain text at /mcp comes out as a JSON-RPC error at 405, its Allow header kept."""
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def receive() -> dict[str, Any]:
        return {"type": "http.disconnect"}

    await AppBoundary(faulty)({"type": "http", "path": "/plain", "method": "PUT"}, receive, send)
    assert sent[0]["status"] == 405 and sent[1]["body"] == b"Method Not Allowed"  # not a door: as it was

    async def plain_at_door(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await faulty({**scope, "path": "/plain"}, receive, send)

    sent.clear()
    await AppBoundary(plain_at_door)({"type": "http", "path": "/mcp", "method": "PUT"}, receive, send)
    headers = dict(sent[0]["headers"])
    assert sent[0]["status"] == 405 and headers[b"allow"] == b"POST"
    assert headers[b"content-type"] == b"application/json"
    assert sent[1]["body"] == (b'{"jsonrpc": "2.0", "id": null, "error": {"code": -32600, '
                               b'"message": "Method Not Allowed"}}')


def test_the_gateway_app_has_the_boundary_outermost(tmp_path) -> None:
    from sentinel_mcp.app.http_app import build_http_app
    from sentinel_mcp.identity.resolver import Authenticator

    app, _ = build_http_app(None, host="127.0.0.1", port=1, auth=Authenticator([]))
    assert app.user_middleware[0].cls is AppBoundary
