"""Talking to another A2A agent: SendMessage/GetTask over its JSON-RPC interface (httpx2)."""

from __future__ import annotations

import ssl
import uuid
from typing import Any
from urllib.parse import urlsplit

import httpx2

from sentinel_mcp.a2a.bearer_token import token_problem
from sentinel_mcp.a2a.bounded_body import BodyRefused, exchange
from sentinel_mcp.a2a.protocol import PROTOCOL_VERSION, Message, Part
from sentinel_mcp.core import wire_limits
from sentinel_mcp.core.display_text import Marked, compose, safe_text
from sentinel_mcp.tls.client_context import httpx_verify
from sentinel_mcp.tls.setup_error import TLSSetupError
from sentinel_mcp.tls.settings import ClientTLS
from sentinel_mcp.core.errors import A2AError


class PeerError(A2AError):
    """The peer answered with a JSON-RPC error, or not at all: ``why``, and (in ``str``) which peer, by its
    URL as ``shown_url`` shows it."""

    def __init__(self, why: str, code: int | None = None, at: str = "") -> None:
        # (a why of Sentinel's words around marked values stays marked: ``display_text.error_text``)
        super().__init__(compose(why, " (peer at ", at, ")") if at and isinstance(why, Marked) else
                         f"{why} (peer at {at})" if at else why)
        self.why = why
        self.code = code


def shown_url(url: str) -> str:
    """A peer's URL as said in an error or a result: scheme, host, port and path; never the user name,
    password or query a configured URL may carry (a credential, a key), which would reach whoever reads it."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        return "(a URL that does not parse)"
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}{port}{parts.path}"


def build_message(text: str | None = None, data: dict[str, Any] | None = None, task_id: str | None = None,
                  context_id: str | None = None) -> Message:
    parts = []
    if text:
        parts.append(Part.of_text(text))
    if data is not None:
        parts.append(Part.of_data(data))
    if not parts:
        raise ValueError("a message needs text or data")
    return Message(message_id=str(uuid.uuid4()), role="ROLE_USER", parts=parts, task_id=task_id,
                   context_id=context_id)


MAX_ANSWER_BYTES = 1 << 20  # as sentinel.a2a.max_frame_bytes' default


async def call_peer(rpc_url: str, method: str, params: dict[str, Any], token: str | None = None,
                    timeout: float = 60.0, tls: ClientTLS | None = None,
                    max_bytes: int = MAX_ANSWER_BYTES) -> Any:
    """``tls``: how the peer is verified (CA, pins) and our client certificate (sentinel.a2a.peer_tls);
    ``timeout``: for the whole exchange; ``max_bytes``: the largest answer read (``PeerError`` beyond it)."""
    headers = {"A2A-Version": PROTOCOL_VERSION, "Content-Type": "application/json"}
    at = shown_url(rpc_url)
    if token is not None:
        # the load's rule again, here where the header is built, whatever gave the token: never a header
        # injected, nor a request the HTTP library refuses with the header (the secret) in its error
        problem = token_problem(token)
        if problem is not None:
            raise PeerError(f"the token for this peer {problem}: nothing was sent", at=at)
        headers["Authorization"] = f"Bearer {token}"
    body = {"jsonrpc": "2.0", "id": str(uuid.uuid4()), "method": method, "params": params}
    try:
        verify = httpx_verify(tls)
    except TLSSetupError as e:
        raise PeerError(f"sentinel.a2a.peer_tls: {e}") from None
    try:
        async with httpx2.AsyncClient(timeout=timeout, follow_redirects=False, verify=verify) as http:
            resp = await exchange(
                http, "POST", rpc_url, limit=max_bytes, deadline=timeout, json=body, headers=headers
            )
    except BodyRefused as e:
        raise PeerError(str(e), at=at) from None
    except (
        httpx2.HTTPError,
        ssl.SSLError,
    ) as e:  # (a TLS 1.3 peer's refusal arrives as an alert on the read)
        # (an httpx error's text may quote the request's URL: only a TLS failure's, which says what failed)
        detail = f": {e}" if rpc_url.startswith("https") and str(e) and rpc_url not in str(e) else ""
        raise PeerError(f"peer unreachable: {type(e).__name__}{detail}", at=at) from None
    if resp.status_code == 401:
        raise PeerError(
            compose("peer refused our credentials (401): ",
                    safe_text(resp.headers.get("www-authenticate", ""), 200)),
            401,
            at,
        )
    if resp.status_code != 200:
        raise PeerError(f"peer answered HTTP {resp.status_code}", at=at)
    reply = parse_answer(resp.content)
    if not isinstance(reply, dict):
        raise PeerError("peer answered a non-object JSON-RPC response")
    if "error" in reply:
        # the peer's words, shown to a person or a model: its code only if it is a number, its message bounded
        # and with hidden characters made visible
        err = reply["error"] if isinstance(reply["error"], dict) else {}
        code = err.get("code")
        code = code if isinstance(code, int) and not isinstance(code, bool) else None
        raise PeerError(compose(f"peer error {code}: ", safe_text(err.get("message"), 500)), code)
    return reply.get("result")


def parse_answer(raw: bytes) -> object:
    """A peer's JSON under the limits Sentinel holds its own callers to (depth, values, integer size, finite
    numbers, UTF-8): a hostile answer is a ``PeerError``, never a parser's RecursionError nor a NaN passed
    on."""
    try:
        return wire_limits.loads(raw)
    except wire_limits.WireError as e:
        raise PeerError(f"peer answered something that is not usable JSON ({e.message})") from None


async def send_message(
    rpc_url: str,
    message: Message,
    token: str | None = None,
    return_immediately: bool = False,
    tls: ClientTLS | None = None,
    max_bytes: int = MAX_ANSWER_BYTES,
) -> dict[str, Any]:
    params: dict[str, Any] = {"message": message.to_wire()}
    if return_immediately:
        params["configuration"] = {"returnImmediately": True}
    result = await call_peer(rpc_url, "SendMessage", params, token, tls=tls, max_bytes=max_bytes)
    if not isinstance(result, dict) or not ({"task", "message"} & set(result)):
        raise PeerError("peer's SendMessage result has neither task nor message")
    return result
