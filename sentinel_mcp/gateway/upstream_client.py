"""Building the ``mcp.Client`` for one upstream: its transport, and which protocol era to speak.

``protocol: auto`` speaks the era the upstream actually speaks, handshake first: every server of the stable
spec
(2025-11-25 and older) answers ``initialize``, and on that era it can ask the client in the middle of a call
(elicitation, sampling, roots), which a 2026-07-28 connection forbids. So an upstream that asks by push keeps
working, and one that ignores the 2026 probe costs no probe timeout. Only an upstream that refuses the
handshake
(2026-only) is spoken to in 2026-07-28, by itself, on the same connect attempt; the era that worked is
remembered for reconnects. ``legacy`` and ``modern`` pin the era.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Callable, Literal

from mcp.shared.exceptions import MCPError

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import Implementation

from sentinel_mcp import __version__
from sentinel_mcp.config import RemoteServer, StdioServer
from sentinel_mcp.core.display_text import MESSAGE_LIMIT, Marked, compose, safe_text, said
from sentinel_mcp.core.errors import GatewayError
from sentinel_mcp.gateway.exact_tool_arguments import hold_exact
from sentinel_mcp.gateway.lean_upstream import HttpSession
from sentinel_mcp.gateway.lean_upstream import answer_limit
from sentinel_mcp.gateway.notice_budget import NoticeBudget
from sentinel_mcp.gateway.paced_reading import paced
from sentinel_mcp.gateway.upstream_http_bodies import REQUEST_HEADERS, body_bounds
from sentinel_mcp.gateway.undeclared_requests import Screen, ScreenedClient


class UpstreamUnavailable(GatewayError):
    """The upstream cannot take calls now (not connected, or its circuit breaker is open)."""


# the SDK's connect modes: the handshake; probe server/discover (the fallback); adopt 2026-07-28 outright
Mode = Literal["legacy", "auto", "2026-07-28"]


def modes_to_try(protocol: str, known: Mode | None) -> list[Mode]:
    """Connect modes in order; ``known`` is the mode that worked last time (reconnects start there)."""
    if protocol == "legacy":
        return ["legacy"]
    if protocol == "modern":
        return ["2026-07-28"]
    first: Mode = known or "legacy"
    return [first, "auto" if first == "legacy" else "legacy"]


def make_client(
    target: Any, mode: Mode, callbacks: dict[str, Any], session: HttpSession | None = None,
    screen: Screen | None = None, budget: NoticeBudget | None = None,
    asked: Callable[[Any], bool] | None = None, stray: Callable[[Any, Any], bool] | None = None,
) -> Client:
    """``callbacks``: elicitation, sampling, list_roots, logging and message handlers of the upstream;
    ``session``: where a streamable-HTTP upstream's ``Mcp-Session-Id`` is noted (for the lean calls);
    ``screen``: each request the upstream sends, before it is answered (``undeclared_requests``);
    ``budget``: its notices reaching no client, which pace the reading of an outside server, and ``asked``:
    whether an answer's id is a request waiting, ``stray``: whether a notice reaches no one (a progress no
    waiting call's own, one the session cannot take: then counted and charged: ``paced_reading.py``)."""
    if isinstance(target, StdioServer):
        # bytes that are not UTF-8 are read as U+FFFD: the SDK's default ("strict") ended its reader task on
        # one such line and left every call waiting out its time limit (a hostile upstream's hang)
        server: Any = stdio_client(StdioServerParameters(
            command=target.command, args=target.args, env=target.env or None, cwd=target.cwd,
            encoding_error_handler="replace",
        ))
    elif isinstance(target, RemoteServer):
        server = remote_transport(target, session)
    else:
        # an in-process built-in, its tools run on exactly the arguments the guard judged
        server = hold_exact(target.server)
    if budget is not None and isinstance(target, (StdioServer, RemoteServer)):
        server = paced(server, budget, asked, stray)
    return ScreenedClient(
        server,
        screen=screen,
        mode=mode,
        read_timeout_seconds=target.timeout,
        cache=None,
        log_level="info",  # 2026-era upstreams send log lines only to requests that opt in
        client_info=Implementation(name="sentinel-mcp", version=__version__),
        **callbacks,
    )


def remote_transport(t: RemoteServer, session: HttpSession | None = None) -> Any:
    import httpx2

    from sentinel_mcp.tls.client_context import httpx_verify

    # every body read within bounds, never compressed (upstream_http_bodies.py); the configured headers last
    headers = {**REQUEST_HEADERS, **(t.headers or {})}
    # https: the server verified (system store or the server's "ca", optional pins), our client certificate
    verify = httpx_verify(t.tls if t.tls != "off" else None)
    bound_body = body_bounds(answer_limit(t))  # the server's max_result_bytes, on the raw bytes
    if t.kind == "sse":
        from mcp.client.sse import sse_client

        def factory(headers: Any = None, timeout: Any = None, auth: Any = None) -> httpx2.AsyncClient:
            return httpx2.AsyncClient(
                headers={**REQUEST_HEADERS, **(headers or {})}, auth=auth, verify=verify,
                timeout=timeout or httpx2.Timeout(30, read=300), event_hooks={"response": [bound_body]},
            )

        return sse_client(
            t.url,
            headers=t.headers or None,
            timeout=t.connect_timeout,
            sse_read_timeout=t.timeout,
            httpx_client_factory=factory,
        )
    from mcp.client.streamable_http import streamable_http_client

    hooks: dict[str, list[Any]] = {"response": [bound_body]}
    if session is not None:

        async def note_session(response: httpx2.Response) -> None:
            # the SDK keeps the id inside its transport (taken from the first answer); the lean calls share
            # the session, so note the same one here
            session.answered_under(response.headers.get("mcp-session-id"))
            if response.status_code == 404 and response.request.headers.get("mcp-session-id"):
                session.gone = True  # the SDK's client would go on asking on it

        hooks["response"].append(note_session)
    http = httpx2.AsyncClient(
        headers=headers, timeout=httpx2.Timeout(t.connect_timeout, read=t.timeout), verify=verify,
        event_hooks=hooks,
    )
    if session is not None:
        session.cookies = http.cookies  # one jar for the SDK's requests and the lean calls (upstream_cookies)
    return _closing(http, streamable_http_client(t.url, http_client=http))


@asynccontextmanager
async def _closing(http: Any, transport: Any) -> AsyncIterator[Any]:
    """``transport``, and ``http`` closed when it ends: the SDK leaves a client it was given open, and its
    kept-alive connections waited for the garbage collector (one more socket per reconnect, or per
    principal's session closed)."""
    async with http, transport as streams:
        yield streams


def describe_error(e: BaseException) -> Marked:
    """Flatten nested ExceptionGroups into one readable line, marked once (``display_text``): an upstream's
    words, or a message that quotes them, are shown safely wherever the line is (a log, the console)."""
    if isinstance(e, BaseExceptionGroup):
        each = list(dict.fromkeys(describe_error(x) for x in e.exceptions))
        return compose(*(part for i, text in enumerate(each) for part in (("; ", text) if i else (text,))))
    text = said(e) or type(e).__name__
    if isinstance(e, MCPError):  # bounded: an upstream's whole message could be megabytes
        return compose(f"MCP error {e.code}: ", safe_text(e.message, MESSAGE_LIMIT))
    if isinstance(e, FileNotFoundError):
        return compose("command not found: ", e.filename or text)
    return compose(f"{type(e).__name__}: ", text) if not text.startswith(type(e).__name__) else compose(text)
