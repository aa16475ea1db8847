"""A peer's HTTP answer read with bounds: a declared Content-Length over the limit is refused before any
body is read, reading stops once the limit is passed (counted after decoding, so a compressed bomb stops
too), and the whole exchange (connect, headers, body) has one deadline: a peer that keeps sending a byte
now and then cannot hold a call open, nor fill the gateway's memory."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx2

from sentinel_mcp.core.errors import A2AError

if TYPE_CHECKING:
    from sentinel_mcp.a2a.announced_card_client import AnnouncedCardClient


class BodyRefused(A2AError):
    """The answer is larger than allowed, or did not arrive in time (the reason says which)."""


@dataclass
class BoundedResponse:
    status_code: int
    headers: httpx2.Headers
    content: bytes  # the body (read only for a 2xx answer; b"" otherwise)


async def exchange(
    http: httpx2.AsyncClient | AnnouncedCardClient, method: str, url: str, *, limit: int, deadline: float,
    **request: Any
) -> BoundedResponse:
    """Send the request and read the answer within ``limit`` bytes and ``deadline`` seconds in all.

    ``BodyRefused`` when either is passed; httpx2's own errors (connect, TLS, protocol) pass through."""
    try:
        return await asyncio.wait_for(_read(http, method, url, limit, request), deadline)
    except TimeoutError:
        raise BodyRefused(f"no complete answer within {deadline:g} s") from None


async def _read(
    http: httpx2.AsyncClient | AnnouncedCardClient, method: str, url: str, limit: int, request: dict[str, Any]
) -> BoundedResponse:
    async with http.stream(method, url, **request) as resp:
        if not 200 <= resp.status_code < 300:  # the status is all a caller uses: the body is not read
            return BoundedResponse(resp.status_code, resp.headers, b"")
        declared = resp.headers.get("content-length")
        if declared is not None:
            if not declared.strip().isdigit():
                raise BodyRefused(f"the answer declares no valid Content-Length ({declared[:40]!r})")
            if int(declared) > limit:
                raise BodyRefused(f"the answer is larger than {limit} bytes (Content-Length {int(declared)})")
        body = bytearray()
        async for chunk in resp.aiter_bytes():
            body += chunk
            if len(body) > limit:
                raise BodyRefused(f"the answer is larger than {limit} bytes")
        return BoundedResponse(resp.status_code, resp.headers, bytes(body))
