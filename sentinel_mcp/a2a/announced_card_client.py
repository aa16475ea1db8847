"""The HTTP client of an announced peer's card fetch: Sentinel's client certificate is shown only to a server
that proved itself first.

An announcement chooses the address the card is fetched from (any host in ``peer_networks``).
``peer_tls``'s client certificate goes out in the handshake before a pin is checked
(``client_context.PinnedSSLObject`` checks a finished handshake) and, under TLS 1.2, in the clear: fetching
with it showed Sentinel's identity to every host there whose chain checks out that asked for one. So the card
is fetched without it; only when that handshake finished (the server's chain, name and pin all checked) and
the server then hung up or refused for want of a certificate (a peer whose front requires one: TLS 1.3 says
so after the handshake) is it fetched again with the certificate. A TLS 1.2 server that requires one refuses
inside the handshake, before it has proved anything: it gets none (list it in ``bridge_targets``: the
owner's URL is fetched with it).
"""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import AsyncIterator
from typing import Any

import httpx2

from sentinel_mcp.tls.client_context import client_context, httpx_verify, without_identity
from sentinel_mcp.tls.settings import ClientTLS


def _recording(tls: ClientTLS | None, proven: list[bool]) -> ssl.SSLContext:
    """A context for ``tls`` (no client certificate) noting in ``proven`` each handshake that finished."""
    ctx = client_context(tls)
    if ctx is None:
        ctx = ssl.create_default_context()
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    base: type[ssl.SSLObject] = ctx.sslobject_class

    class Recording(base):  # type: ignore[valid-type, misc]  # (a class chosen at run time)
        def do_handshake(self) -> None:
            super().do_handshake()  # (a pin, when configured, is checked in here)
            proven.append(True)

    ctx.sslobject_class = Recording
    return ctx


class AnnouncedCardClient:
    """``stream`` as ``httpx2.AsyncClient``'s, for the card fetch of an announced address."""

    def __init__(self, tls: ClientTLS | None, timeout: float = 5.0) -> None:
        self.tls, self.timeout = without_identity(tls), timeout
        self._mutual = (httpx2.AsyncClient(timeout=httpx2.Timeout(timeout), follow_redirects=False,
                                           verify=httpx_verify(tls))
                        if tls is not None and tls.cert else None)
        client_context(self.tls)  # (a CA file that cannot load: said now, as a client's would be)

    @contextlib.asynccontextmanager
    async def stream(self, method: str, url: str, **request: Any) -> AsyncIterator[httpx2.Response]:
        proven: list[bool] = []
        async with contextlib.AsyncExitStack() as stack:
            anonymous = await stack.enter_async_context(httpx2.AsyncClient(
                timeout=httpx2.Timeout(self.timeout), follow_redirects=False,
                verify=_recording(self.tls, proven)))
            try:
                resp = await stack.enter_async_context(anonymous.stream(method, url, **request))
            except (httpx2.HTTPError, ssl.SSLError):
                if not (proven and self._mutual is not None and url.startswith("https:")):
                    raise
                resp = await stack.enter_async_context(self._mutual.stream(method, url, **request))
            yield resp

    async def aclose(self) -> None:
        if self._mutual is not None:
            await self._mutual.aclose()

    async def __aenter__(self) -> AnnouncedCardClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
