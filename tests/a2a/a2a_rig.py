"""A2A test rig: real in-process MCP servers behind a small GatewayPort, served by real uvicorn on 127.0.0.1.

``ClientPort`` stands in for the gateway (the lead's end-to-end tests use the real one): it forwards
every call with the real ``mcp.Client`` to in-process MCPServers and applies a fixed guard per tool:
allow, deny, or ask (one yes/no confirmation question, bound to the call's argument digest).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import httpx2
import uvicorn
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import Tool
from pydantic import BaseModel
from starlette.applications import Starlette

from sentinel_mcp.a2a.app import create_a2a_routes
from sentinel_mcp.a2a.discovery import PeerRegistry
from sentinel_mcp.a2a.service import A2AService
from sentinel_mcp.a2a.settings import A2ASettings
from sentinel_mcp.a2a.ws_server_options import ws_server_options
from sentinel_mcp.app.ws_protocol import FrontWebSocketProtocol
from sentinel_mcp.core.decision import Answer, Deny, Question, argument_digest
from sentinel_mcp.app.http_app import CallerGuard
from sentinel_mcp.core.port import Completed, InvokeOutcome, NeedsInput, Refused
from sentinel_mcp.core.tool_ref import ToolRef
from sentinel_mcp.identity.resolver import Authenticator
from sentinel_mcp.tls.acceptor import TLSAcceptor
from sentinel_mcp.tls.server_context import FrontTLS, ServerContexts

LOOPBACK = ["127.0.0.1"]


def multicast_problem() -> str | None:
    """Why mDNS multicast on loopback cannot work here (a reason to skip), or None when it can."""
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                     socket.inet_aton("224.0.0.251") + socket.inet_aton("127.0.0.1"))
        s.close()
        return None
    except OSError as e:
        return f"cannot join 224.0.0.251 on 127.0.0.1: {e}"


# --- the upstream MCP servers ------------------------------------------------------------------

RELEASE: dict[str, asyncio.Event] = {}


class Reading(BaseModel):
    task_id: str | None = None
    payload: dict[str, Any]
    redactions: list[str]
    timestamp: str


def sensors_server() -> MCPServer:
    s = MCPServer("sensors")

    @s.tool()
    def sensor_read(sensor: str, policy_tag: str, scope: str = "minimal", retention: int | None = None,
                    rate: float | None = None, task_id: str = "") -> Reading:
        """Read a simulated sensor with the design's scope redactions."""
        if sensor != "location":
            raise ToolError(f"unknown sensor {sensor!r}")
        lat, lon, alt = 37.7749295, -122.4194155, 16.0
        now = datetime.now(UTC).isoformat()
        if scope == "minimal":
            return Reading(
                task_id=task_id,
                payload={"latitude": round(lat), "longitude": round(lon)},
                timestamp=now,
                redactions=["Rounded to city-level precision", "Removed altitude"],
            )
        if scope == "standard":
            return Reading(
                task_id=task_id,
                payload={"latitude": round(lat, 2), "longitude": round(lon, 2)},
                timestamp=now,
                redactions=["Rounded to street-level precision", "Removed altitude"],
            )
        return Reading(
            task_id=task_id,
            payload={"latitude": lat, "longitude": lon, "altitude": alt},
            redactions=[],
            timestamp=now,
        )

    return s


def tools_server() -> MCPServer:
    s = MCPServer("tools")

    @s.tool()
    def echo(text: str) -> str:
        return f"echo: {text}"

    @s.tool()
    async def wait_for(key: str) -> str:
        """Blocks until the test releases ``key`` (a task that stays WORKING)."""
        event = RELEASE.setdefault(key, asyncio.Event())
        await asyncio.wait_for(event.wait(), 60)
        return f"released {key}"

    @s.tool()
    def delete_file(path: str) -> str:
        return f"deleted {path}"

    @s.tool()
    def forbidden() -> str:
        return "never"

    return s


def llm_server() -> MCPServer:
    """Stands in for the llm built-in (a model is not needed to test the relay): replies deterministically."""
    s = MCPServer("llm")

    @s.tool()
    def llm_generate(prompt: str, system: str | None = None, max_tokens: int = 64) -> str:
        last = [ln for ln in prompt.splitlines() if ln.startswith("user:")]
        said = last[-1][5:].strip() if last else prompt.strip()
        return f"llm heard: {said[:200]}"

    return s


# --- the port ----------------------------------------------------------------------------------

Policy = Literal["allow", "deny", "ask"]


@dataclass
class Invocation:
    name: str
    arguments: dict[str, Any]
    session_id: str
    client: str | None
    origin: str
    answers: dict[str, Answer] | None


@dataclass
class ClientPort:
    clients: dict[str, Client]
    tools: dict[str, Tool]
    policies: dict[str, Policy] = field(default_factory=dict)
    calls: list[Invocation] = field(default_factory=list)

    async def invoke(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        *,
        session_id: str,
        client: str | None = None,
        origin: str = "client",
        answers: dict[str, Answer] | None = None,
        depth: int = 0,
        progress: Any = None,
        principal: Any = None,
        identity: str | None = None,
        recheck: Any = None,
    ) -> InvokeOutcome:
        args = dict(arguments or {})
        self.calls.append(Invocation(name, args, session_id, client, origin, answers))
        if name not in self.tools:
            return Refused(reason=f"unknown tool {name!r}")
        if identity is not None and identity != name:  # as the gateway: answers are for the tool asked about
            return Refused(reason=f"{name} names another tool than the one the question was about")
        policy = self.policies.get(name, "allow")
        if policy == "deny":
            return Refused(
                reason=f"{name} is denied by policy",
                decision=Deny(
                    reason="denied", unmet=["allowed(forbidden)"], how_to_unblock=["ask an administrator"]
                ),
            )
        if policy == "ask":
            key = f"confirm.{argument_digest(args)}"
            answer = (answers or {}).get(key)
            if answer is None or answer.action == "cancel":
                return NeedsInput(
                    identity=name,
                    reason=f"{name} needs confirmation",
                    questions=[
                        Question(
                            key=key,
                            message=f"Allow {name} with {args}?",
                            requested_schema={
                                "type": "object",
                                "properties": {"confirm": {"type": "boolean"}},
                                "required": ["confirm"],
                            },
                        )
                    ],
                )
            if answer.action == "decline" or not (answer.content or {}).get("confirm"):
                return Refused(reason="the user declined", decision=Deny(reason="declined"))
        server, _, tool = name.partition("__")
        result = await self.clients[server].call_tool(tool, args)
        return Completed(result=result)

    def find_tool(self, name: str) -> Tool | None:
        return self.tools.get(name)

    def list_catalog_tools(self) -> list[Tool]:
        return list(self.tools.values())

    def identity_of(self, name: str) -> ToolRef | None:
        server, _, tool = name.partition("__")
        return ToolRef(server, tool) if name in self.tools and tool else None


@contextlib.asynccontextmanager
async def open_port(
    mode: str = "auto", with_llm: bool = False, with_sensors: bool = True
) -> AsyncIterator[ClientPort]:
    """The clients live in a task of their own: anyio cancel scopes must be exited by the task that
    entered them, and pytest-asyncio may set up and tear down a fixture in different tasks."""
    servers = {"tools": tools_server()}
    if with_sensors:
        servers["sensors"] = sensors_server()
    if with_llm:
        servers["llm"] = llm_server()
    ready: asyncio.Future[ClientPort] = asyncio.get_running_loop().create_future()
    stop = asyncio.Event()

    async def hold() -> None:
        try:
            async with contextlib.AsyncExitStack() as stack:
                clients: dict[str, Client] = {}
                tools: dict[str, Tool] = {}
                for name, srv in servers.items():
                    c = await stack.enter_async_context(Client(srv, mode=mode))  # type: ignore[arg-type]
                    clients[name] = c
                    for t in (await c.list_tools()).tools:
                        tools[f"{name}__{t.name}"] = t.model_copy(update={"name": f"{name}__{t.name}"})
                ready.set_result(
                    ClientPort(
                        clients, tools, policies={"tools__delete_file": "ask", "tools__forbidden": "deny"}
                    )
                )
                await stop.wait()
        except BaseException as e:
            if not ready.done():
                ready.set_exception(e)
            raise

    holder = asyncio.create_task(hold())
    port = await ready
    try:
        yield port
    finally:
        stop.set()
        await holder


# --- the HTTP server ---------------------------------------------------------------------------


@dataclass
class Served:
    base_url: str
    port: ClientPort
    settings: A2ASettings
    service: A2AService

    @property
    def rpc_url(self) -> str:
        return self.base_url + "/a2a"

    @property
    def ws_url(self) -> str:
        return "ws" + self.base_url[4:] + "/a2a/ws"  # http -> ws, https -> wss


@contextlib.asynccontextmanager
async def serve(
    port: ClientPort,
    settings: A2ASettings,
    peers: PeerRegistry | None = None,
    task_db: Path | None = None,
    tls: FrontTLS | None = None,
    auth: Authenticator | None = None,
) -> AsyncIterator[Served]:
    """``tls``: serve HTTPS as Sentinel's front does (the deprecated ``settings.tls_cert`` too); ``auth``:
    resolve
    callers as the front does (e.g. by client certificate) instead of the A2A section's own keys."""
    if tls is None and settings.tls_cert and settings.tls_key:
        tls = FrontTLS(Path(settings.tls_cert), Path(settings.tls_key))
    if tls is not None:
        settings = settings.served_over_tls(client_certificates=tls.mode)
    service = A2AService(port, settings, peers)
    await service.open(task_db)
    app = Starlette(routes=create_a2a_routes(port, settings, peers, service=service))
    if auth is not None:
        app.add_middleware(CallerGuard, bind_host="127.0.0.1", port=0, auth=auth)
    sock = socket.socket()
    # accepted sockets inherit it; uvicorn given a ready socket leaves Nagle on (40 ms per keep-alive reply)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    host_port = sock.getsockname()[1]
    # the front's protocols' WebSocket part, as the gateway's server runs it (app/serve.py)
    options = (
        TLSAcceptor(ServerContexts(tls)).uvicorn_options(ws_base=FrontWebSocketProtocol)
        if tls is not None
        else {"ws": FrontWebSocketProtocol}
    )
    options |= ws_server_options(settings)  # as the gateway's server is told (app/serve.py)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off", **options))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    try:
        yield Served(
            f"{'https' if tls is not None else 'http'}://127.0.0.1:{host_port}", port, settings, service
        )
    finally:
        server.should_exit = True
        await task
        sock.close()
        await service.close()


async def rpc(
    http: httpx2.AsyncClient, url: str, method: str, params: Any = None, rid: Any = 1, **kw: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        body["params"] = params
    r = await http.post(url, json=body, **kw)
    assert r.status_code == 200, r.text
    return r.json()


def user_message(
    *parts: dict[str, Any],
    task_id: str | None = None,
    context_id: str | None = None,
    message_id: str | None = None,
) -> dict[str, Any]:
    import uuid

    m: dict[str, Any] = {
        "messageId": message_id or str(uuid.uuid4()),
        "role": "ROLE_USER",
        "parts": list(parts),
    }
    if task_id:
        m["taskId"] = task_id
    if context_id:
        m["contextId"] = context_id
    return m
