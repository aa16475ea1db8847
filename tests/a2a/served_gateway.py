"""A real gateway with A2A over HTTP: the gateway's HTTP app (``build_http_app``) with A2A mounted
(``mount_a2a``), served by uvicorn on a free 127.0.0.1 port, its built-ins up (health ``ok``) before the
test runs, and always shut down. One place for what five end-to-end tests each wrote again."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx2
import uvicorn

from sentinel_mcp.a2a.app import mount_a2a
from sentinel_mcp.app.http_app import build_http_app
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import Config, parse_config
from sentinel_mcp.identity.http_auth import http_auth_for


@dataclass(frozen=True)
class ServedGateway:
    base: str  # http://127.0.0.1:PORT
    port: int
    config: Config
    holder: Any  # what build_http_app hands back (the running gateway's holder)


@contextlib.asynccontextmanager
async def gateway_with_a2a(raw: dict[str, Any], base_dir: Any, *, source: str = "<test>",
                           health_tries: int = 300) -> AsyncIterator[ServedGateway]:
    """Serve ``raw`` (a sentinel.json as a dict) until the block ends. The built-ins start in the app's
    lifespan: this waits (``health_tries`` × 0.1 s) for /healthz to say ``ok`` and fails if it never does."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = parse_config(raw, source=source, base_dir=base_dir)
    auth = http_auth_for(config)
    app, holder = build_http_app(
        running_gateway(config), host="127.0.0.1", port=port, auth=auth.authenticator
    )
    mount_a2a(app, holder, config, "127.0.0.1", port, auth.owner_token)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            if serving.done():
                serving.result()
            await asyncio.sleep(0.02)
        base = f"http://127.0.0.1:{port}"
        async with httpx2.AsyncClient(timeout=60) as http:
            for _ in range(health_tries):
                if (await http.get(base + "/healthz")).json().get("status") == "ok":
                    break
                await asyncio.sleep(0.1)
            else:
                raise AssertionError("the gateway's health never became ok")
        yield ServedGateway(base=base, port=port, config=config, holder=holder)
    finally:
        server.should_exit = True
        await serving
        sock.close()
