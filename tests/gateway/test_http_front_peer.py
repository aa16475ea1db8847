"""The HTTP front takes a caller's address from its socket, never from headers it sends: uvicorn's default
trusts ``X-Forwarded-For`` and ``X-Forwarded-Proto`` from 127.0.0.1, which let any local process name itself
another peer (an unauthenticated A2A caller's identity and task quota, the console's failed-login count)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from sentinel_mcp.app.serve import http_server
from sentinel_mcp.config import parse_config
from tests.conftest import free_port


async def test_forwarded_headers_do_not_change_the_callers_address(tmp_path: Path) -> None:
    config = parse_config({"mcpServers": {}, "sentinel": {"data_dir": str(tmp_path / "data"), "builtins": [],
                                                          "http": {"token": "peer-test-token-0123456789"}}})
    server = http_server(config, "127.0.0.1", free_port())
    server.config.lifespan = "off"  # Sentinel's own app is replaced below: nothing of it starts
    server.config.load()
    seen: list[Any] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append((scope.get("client"), scope.get("scheme")))
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    server.config.loaded_app = _innermost_replaced(server.config.loaded_app, app)
    server.lifespan = server.config.lifespan_class(server.config)  # as uvicorn's Server._serve sets it
    await server.startup()
    try:
        port = server.servers[0].sockets[0].getsockname()[1]
        for forwarded in ("10.9.8.7", "10.9.8.7, 192.0.2.1", "unknown"):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write((f"GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: {forwarded}\r\n"
                          "X-Forwarded-Proto: https\r\nConnection: close\r\n\r\n").encode())
            await writer.drain()
            assert (await reader.read()).startswith(b"HTTP/1.1 204")
            writer.close()
        peers = [(client[0], scheme) for client, scheme in seen]
        assert peers == [("127.0.0.1", "http")] * 3, json.dumps(seen)
    finally:
        await server.shutdown()


def _innermost_replaced(app: Any, inner: Any) -> Any:
    """The app uvicorn loaded (its own wrappers outside, if any) with Sentinel's app replaced by ``inner``:
    what reaches the app is what uvicorn's wrappers made of the request."""
    outer, current = None, app
    while hasattr(current, "app") and type(current).__module__.startswith("uvicorn"):
        outer, current = current, current.app
    if outer is None:
        return inner
    outer.app = inner
    return app
