"""The headers every HTTP answer of the front carries, whichever app, route or layer made it (the SDK's
transport, the lean paths, A2A, the console, Starlette's 404 and 405, a refusal, a redirect, an event
stream): one middleware, the outermost, so an answer added later carries them without being told to.

Nothing outside the console is HTML, but an answer holds hostile text (a tool's result, an upstream's error,
a peer's message): a browser sniffing a JSON answer as HTML ran it as a page of this origin, and any answer
could be framed. So every answer is ``nosniff`` and never framed (``X-Frame-Options`` and the CSP's
``frame-ancestors``), never stored (an answer may hold a principal's data: a shared or browser cache kept
it), and sends no referrer. An app that sets its own CSP or ``Referrer-Policy`` keeps it (the console's
pages run its script, and its forms need ``same-origin``: ``no-referrer`` made browsers send ``Origin:
null``); its own ``Cache-Control`` gets ``no-store`` added when it lacks it; the other two are always these.

What is added is a pre-built constant: per answer, one pass over the answer's own few headers, then (on the
front's own protocol, ``http_protocol.HeadHoldingTransport``) these lines joined to the head as bytes, or else
the pre-built pairs added to the answer's headers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sentinel_mcp.app.lean_calls import HEAD_HOLDER_KEY
from sentinel_mcp.core.safe_headers import SAFE_HEAD_LINES, SAFE_HEADERS

_ALWAYS = frozenset((b"x-content-type-options", b"x-frame-options"))  # an app's own value is dropped
_NAMES = frozenset(name for name, _ in SAFE_HEADERS)
_STARTS = frozenset(("http.response.start", "websocket.http.response.start"))


def own_safe_headers(headers: Iterable[tuple[bytes, bytes]]) -> bool:
    """Whether ``headers`` name any of ``SAFE_HEADERS`` (the common answer names none)."""
    for name, _ in headers:
        if name.lower() in _NAMES:
            return True
    return False


def with_safe_headers(headers: list[tuple[bytes, bytes]] | tuple[tuple[bytes, bytes], ...]
                      ) -> list[tuple[bytes, bytes]]:
    """``headers`` with ``SAFE_HEADERS`` (an app's own CSP and Referrer-Policy kept, its Cache-Control with
    no-store)."""
    kept: list[tuple[bytes, bytes]] = []
    own: set[bytes] = set()
    for name, value in headers:
        low = name.lower()
        if low in _NAMES:
            if low in _ALWAYS:
                continue
            if low == b"cache-control" and b"no-store" not in value.lower():
                # its other directives kept (an event stream's no-transform), no-store put first
                value = b"no-store, " + value
            own.add(low)
        kept.append((name, value))
    if not own:  # the common answer (the lean paths' among them): the tuple as built
        kept.extend(SAFE_HEADERS)
        return kept
    kept.extend(pair for pair in SAFE_HEADERS if pair[0] not in own)
    return kept


class SafeHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        # nothing to do after the inner app: its awaitable is handed back, not awaited in a coroutine of this
        # layer's, which each resumption of the request's task would run through (issue 21)
        if scope["type"] == "lifespan":
            return self.app(scope, receive, send)

        holder = scope.get(HEAD_HOLDER_KEY)  # the front's own protocol: it joins the lines to the head

        async def sending(message: Message) -> None:
            if message["type"] in _STARTS:  # a WebSocket upgrade refused with an HTTP answer too
                headers = message.get("headers", ())
                if holder is not None and not own_safe_headers(headers):
                    # the common answer: the constant joined to the head its send writes (HTTP/1.1 answers
                    # on a connection go one at a time: no other head is written meanwhile)
                    holder.head_lines = SAFE_HEAD_LINES
                    try:
                        return await send(message)
                    finally:
                        holder.head_lines = b""
                message = {**message, "headers": with_safe_headers(headers)}
            await send(message)

        return self.app(scope, receive, sending)
