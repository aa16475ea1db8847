"""A test upstream that keeps state per MCP session, as a browser keeps its cookies: ``login(name)`` then
``whoami()`` answers that name to the same session only (over stdio the process is the session; over HTTP
its ``Mcp-Session-Id``, or on 2026-07-28, which has none, the cookie ``jar`` it sets on a client's first
request, as a web server keeps a login). ``peer()`` names the TCP connection a request came on, ``pid()``
its process, ``die()`` ends it. ``forget()`` makes the server forget its HTTP session (each later request on
it answered 404, as a server restarted); ``switch()`` answers its later requests under another session id;
``bump(key)`` counts the calls that reached it under ``key``.

stdio: python stateful_upstream.py        HTTP: python stateful_upstream.py --http PORT (or --sse PORT)
"""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import os
import sys
import uuid
import warnings
from http.cookies import SimpleCookie
from typing import Any

import anyio

from mcp import MCPDeprecationWarning
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import Completion, ToolAnnotations

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
RO = ToolAnnotations(read_only_hint=True)  # let through unasked: the tests are about sessions, not asking

mcp = MCPServer("stateful", version="1.0")
LOGGED_IN: dict[str, str] = {}
FORGOTTEN: set[str] = set()  # Mcp-Session-Ids this server answers 404 to
SWITCHED: set[str] = set()  # Mcp-Session-Ids whose requests this server answers under another id
BUMPS: dict[str, int] = {}


def _session(ctx: Context) -> str:
    headers = ctx.headers or {}
    if headers.get("mcp-session-id"):
        return str(headers["mcp-session-id"])
    return "jar:" + str(headers["x-jar"]) if headers.get("x-jar") else "this process"


def _with_jar(app: Any) -> Any:
    """The cookie ``jar`` read (one minted and set when the request brings none) and the TCP peer, both
    handed to the tools as headers only this wrapper writes."""

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await app(scope, receive, send)
        if dict(scope["headers"]).get(b"mcp-session-id", b"").decode("latin-1") in FORGOTTEN:
            await send({"type": "http.response.start", "status": 404, "headers": []})
            return await send({"type": "http.response.body", "body": b""})
        heads = [(k, v) for k, v in scope["headers"] if k not in (b"x-jar", b"x-peer")]
        cookies = SimpleCookie(b"; ".join(v for k, v in heads if k == b"cookie").decode("latin-1"))
        minted = None if "jar" in cookies else uuid.uuid4().hex
        jar = minted or cookies["jar"].value
        heads += [(b"x-jar", jar.encode()), (b"x-peer", str(scope["client"][1]).encode())]

        sid = dict(scope["headers"]).get(b"mcp-session-id", b"").decode("latin-1")

        async def send_cookie(message: Any) -> None:
            if minted and message["type"] == "http.response.start":
                cookie = (b"set-cookie", f"jar={minted}; Path=/; HttpOnly".encode())
                message = {**message, "headers": [*message.get("headers", []), cookie]}
            if sid in SWITCHED and message["type"] == "http.response.start":
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"mcp-session-id"]
                message = {**message, "headers": [*kept, (b"mcp-session-id", f"other-{sid}".encode())]}
            await send(message)

        await app({**scope, "headers": heads}, receive, send_cookie)

    return wrapped


@mcp.tool(annotations=RO)
def peer(ctx: Context) -> str:
    """The client port of the TCP connection this request came on (over HTTP)."""
    return str((ctx.headers or {}).get("x-peer", ""))


@mcp.tool(annotations=RO)
def login(name: str, ctx: Context) -> str:
    """Log this session in as ``name``."""
    LOGGED_IN[_session(ctx)] = name
    return f"logged in as {name}"


@mcp.tool(annotations=RO)
def whoami(ctx: Context) -> str:
    """Who this session is logged in as."""
    return LOGGED_IN.get(_session(ctx), "nobody")


@mcp.resource("state://{what}")
def state_resource(what: str, ctx: Context) -> str:
    """Who this session is logged in as (``state://whoami``), as a resource."""
    return LOGGED_IN.get(_session(ctx), "nobody") if what == "whoami" else ""


@mcp.prompt()
def greeting(ctx: Context) -> str:
    """A greeting to whoever this session is logged in as."""
    return "hello " + LOGGED_IN.get(_session(ctx), "nobody")


@mcp.completion()
async def complete(ref: object, argument: object, context: object) -> Completion:
    """Suggests whom this process is logged in as (over stdio the process is the session)."""
    return Completion(values=[LOGGED_IN.get("this process", "nobody")])


@mcp.tool(annotations=RO)
def pid() -> str:
    """This server's process id."""
    return str(os.getpid())


@mcp.tool(annotations=RO)
async def hold(path: str) -> str:
    """Answer once ``path`` exists (a test lets it go; no clock)."""
    while not os.path.exists(path):
        await anyio.sleep(0.02)
    return "held"


@mcp.tool(annotations=RO)
def forget(ctx: Context) -> str:
    """Forget this HTTP session: every later request on it is answered 404."""
    FORGOTTEN.add(str((ctx.headers or {}).get("mcp-session-id", "")))
    return "forgotten"


@mcp.tool(annotations=RO)
def switch(ctx: Context) -> str:
    """Answer every later request on this HTTP session under another session id (a proxy that lost track,
    a server that restarted into a new session and says so only in its headers)."""
    SWITCHED.add(str((ctx.headers or {}).get("mcp-session-id", "")))
    return "switched"


@mcp.tool(annotations=RO)
def bump(key: str) -> str:
    """How many calls reached this server under ``key``, this one counted."""
    BUMPS[key] = BUMPS.get(key, 0) + 1
    return str(BUMPS[key])


@mcp.tool(annotations=RO)
def blob(size: int) -> str:
    """A text of ``size`` bytes."""
    return "x" * size


@mcp.tool(annotations=RO)
def die() -> str:
    """End this server's process."""
    os._exit(3)


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    if len(sys.argv) > 2 and sys.argv[1] in ("--http", "--sse"):
        import uvicorn

        http = mcp.streamable_http_app if sys.argv[1] == "--http" else mcp.sse_app
        app = _with_jar(http(host="127.0.0.1"))
        uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
    else:
        mcp.run()
