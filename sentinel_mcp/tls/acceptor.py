"""TLS termination for uvicorn, with the client certificate in the ASGI scope and refused handshakes audited.

uvicorn's own ``ssl_*`` options hand the socket to asyncio, which drops a failed handshake silently and never
tells the application which certificate the client showed. So uvicorn is given a protocol factory instead:
each accepted connection is upgraded with ``loop.start_tls`` (public asyncio API), using the context of the
moment (certificate, CA and CRL re-read when they change); a refused handshake is reported with the peer's
address and OpenSSL's reason; a completed one is handed to uvicorn's own HTTP protocol, subclassed only to add
the ASGI TLS extension (``scope["extensions"]["tls"]``) to every request and WebSocket of that connection.
Everything after the handshake (streaming, SSE, WebSocket upgrades, flow control) is uvicorn's unchanged code.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import time
import traceback
from typing import Any, Callable

from sentinel_mcp.core.connection_share import between_requests, holder as holder_of
from sentinel_mcp.core.deployment_caps import cap
from sentinel_mcp.tls.peer_certificate import HANDSHAKE_BUNDLE, CertificateUnreadable, from_der
from sentinel_mcp.tls.refusal_reply import Connection, current_connection
from sentinel_mcp.tls.server_context import ServerContexts

log = logging.getLogger(__name__)

TLS_VERSIONS = {"TLSv1.2": 0x0303, "TLSv1.3": 0x0304}
# OpenSSL reasons that are about the client's certificate (as opposed to a scanner or a plaintext client)
CERTIFICATE_REASONS = (
    "PEER_DID_NOT_RETURN_A_CERTIFICATE",
    "CERTIFICATE_VERIFY_FAILED",
    "NO_CERTIFICATE_RETURNED",
    "CERTIFICATE_REQUIRED",
)

RefusalHook = Callable[[str | None, str], None]  # (peer address, reason)

# handshakes under way at once, in all and from one address. Each holds asyncio's TLS read buffer (256 KiB)
# and OpenSSL's state from its first byte to the end of the handshake (or ``handshake_timeout``, however
# slowly its bytes come): without a bound, a few thousand silent TCP connections took gigabytes, never given
# back. An address at its bound gives up its oldest handshake for its new one; past the bound in all, the
# address holding the most gives way. ``SENTINEL_CAP_TLS_HANDSHAKES`` (``_PER_PEER``) set them for a
# deployment.
MAX_HANDSHAKES = cap("TLS_HANDSHAKES", 512)
MAX_HANDSHAKES_PER_PEER = cap("TLS_HANDSHAKES_PER_PEER", 64)
SHED_LOG_SECONDS = 60.0  # at most one warning per this many seconds about connections closed for the bound
# connections open after their handshake, in all and from one holder: each keeps that buffer (~220 KB a
# connection measured) for as long as it stays open, so 3,000 idle TLS connections that never signed in took
# 670 MB. A holder at its bound gives up its oldest idle connection, between requests (its new one is
# closed after the handshake when each is serving); past the bound in all, the holder with the most gives up
# its oldest connection. An MCP client needs a few; a browser, six per host.
# ``SENTINEL_CAP_TLS_CONNECTIONS`` (``_PER_PEER``) set them for a deployment.
# refused handshakes logged one by one per window (then counted, and the count logged at the next refusal)
REFUSALS_LOGGED = 20
REFUSAL_LOG_SECONDS = 60.0
MAX_OPEN = cap("TLS_CONNECTIONS", 2048)
MAX_OPEN_PER_PEER = cap("TLS_CONNECTIONS_PER_PEER", 128)


def tls_extension(transport: Any) -> dict[str, Any] | None:
    """The ASGI TLS extension of a connection (None for plaintext): the verified client certificate, if any.
    """
    sslobj = transport.get_extra_info("ssl_object")
    if sslobj is None:
        return None
    der = sslobj.getpeercert(binary_form=True)
    chain, name, error = [], None, None
    if der:
        chain = [ssl.DER_cert_to_PEM_cert(der)]
        try:
            name = from_der(der).subject_text
        except CertificateUnreadable as e:  # OpenSSL took it; the resolver refuses it, saying why
            error = str(e)
    return {
        "server_cert": None,
        "client_cert_chain": chain,
        "client_cert_name": name,
        "client_cert_error": error,
        "tls_version": TLS_VERSIONS.get(sslobj.version() or ""),
        "cipher_suite": None,
        # the CA bundle this connection's handshake verified the certificate with (not ASGI's: Sentinel's)
        HANDSHAKE_BUNDLE: getattr(sslobj.context, HANDSHAKE_BUNDLE, None),
    }


def with_tls_scope(base: type, contexts: ServerContexts | None = None) -> type:
    """A subclass of uvicorn's protocol ``base`` whose requests carry their connection's TLS extension; with
    ``contexts``, each request first awaits a rebuild of the TLS files under way (off the loop), so a CRL
    written counts from the next request (its checks, ``is_revoked``, read the state in force)."""

    class TLSScopeProtocol(base):  # type: ignore[valid-type, misc]
        app: Any  # uvicorn's protocols hold the ASGI app they serve (an annotation only: nothing is set here)

        def connection_made(self, transport: Any) -> None:
            info = tls_extension(transport)
            if info is not None:
                app = self.app

                async def app_with_tls(scope: Any, receive: Any, send: Any) -> None:
                    if scope.get("type") in ("http", "websocket"):
                        scope["extensions"] = {**(scope.get("extensions") or {}), "tls": info}
                        if contexts is not None:
                            await contexts.fresh()
                            receive, send = _settled(contexts, receive, send)
                    await app(scope, receive, send)

                self.app = app_with_tls
            super().connection_made(transport)

    TLSScopeProtocol.__name__ = TLSScopeProtocol.__qualname__ = f"TLS{base.__name__}"
    return TLSScopeProtocol


def _settled(contexts: ServerContexts, receive: Any, send: Any) -> tuple[Any, Any]:
    """``receive`` and ``send`` that await a rebuild of the TLS files under way (off the loop) with each
    message: an open WebSocket's or stream's re-check of its certificate (``is_revoked``, before a message is
    acted on or an answer's chunk sent) reads the CRL written since, not the one in force when it opened."""

    async def receive_settled() -> Any:
        message = await receive()
        await contexts.fresh()
        return message

    async def send_settled(message: Any) -> None:
        await contexts.fresh()
        await send(message)

    return receive_settled, send_settled


def describe_refusal(exc: BaseException) -> str | None:
    """A short reason when a handshake failed because of the client's certificate, else None."""
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"client certificate refused: {exc.verify_message or exc.reason or exc}"
    if isinstance(exc, ssl.SSLError) and (exc.reason or "") in CERTIFICATE_REASONS:
        if "RETURN" in (exc.reason or "") or "REQUIRED" in (exc.reason or ""):
            return "client certificate refused: none presented (this front requires one)"
        return f"client certificate refused: {exc.reason}"
    return None


class _Handshake(asyncio.Protocol):
    """Owns a fresh connection until its TLS handshake is done, then hands it to uvicorn's protocol.

    Bytes the TLS layer decrypts between the end of the handshake and the hand-over (a client may send its
    request in the same packet as its last handshake message) are kept and passed on in order."""

    def __init__(self, acceptor: "TLSAcceptor", make_inner: Callable[[], asyncio.Protocol]) -> None:
        self.acceptor = acceptor
        self.make_inner = make_inner
        self.early: list[bytes] = []
        self.eof = False
        self.lost = False

    def connection_made(self, transport: Any) -> None:  # type: ignore[override]
        transport.pause_reading()  # nothing is read as plaintext
        peer = _peer_of(transport)
        if not self.acceptor.admit(peer, transport):
            transport.abort()
            return
        loop = asyncio.get_running_loop()
        task = loop.create_task(self._upgrade(loop, transport, peer))
        self.acceptor.pending.add(task)

        def done(t: asyncio.Task[None]) -> None:
            self.acceptor.pending.discard(t)
            self.acceptor.release(peer, transport)

        task.add_done_callback(done)

    async def _upgrade(self, loop: asyncio.AbstractEventLoop, raw: Any, peer: str | None) -> None:
        current_connection.set(
            Connection(raw)
        )  # this task's own context: read when start_tls wraps the socket
        try:
            # the files as they are now, a rebuild under way awaited off the loop (server_context.py)
            context = await self.acceptor.contexts.fresh()
            tls = await loop.start_tls(
                raw,
                self,
                context,
                server_side=True,
                ssl_handshake_timeout=self.acceptor.contexts.tls.handshake_timeout,
            )
        except asyncio.CancelledError:
            raw.close()
            raise
        except Exception as e:  # noqa: BLE001 - every failed handshake ends its connection, never the server
            raw.close()
            self.acceptor.handshake_failed(peer, e)
            # the error holds the frames that raised it, and one of them (start_tls) the future holding the
            # error: a cycle that kept the connection's TLS state (a 256 KiB buffer) until the next full
            # collection, which a gateway with many objects seldom runs. Cleared, it goes now.
            traceback.clear_frames(e.__traceback__)
            e.__traceback__ = None
            return
        if tls is None or self.lost:
            return
        if not self.acceptor.keep_open(peer, tls):
            tls.abort()
            return
        inner = self.make_inner()
        tls.set_protocol(inner)
        try:
            inner.connection_made(tls)
        except Exception:  # noqa: BLE001 - a connection its protocol could not take is closed, never left open
            log.exception("TLS: the connection from %s could not be handed to HTTP; closed", peer)
            tls.abort()
            return
        if self.early:
            inner.data_received(b"".join(self.early))
            self.early.clear()
        if self.eof:
            inner.eof_received()

    def data_received(self, data: bytes) -> None:
        self.early.append(data)

    def eof_received(self) -> bool | None:
        self.eof = True
        return True  # the inner protocol decides, once it has the connection

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True


def _peer_of(transport: Any) -> str | None:
    peername = transport.get_extra_info("peername")
    return str(peername[0]) if isinstance(peername, (tuple, list)) and peername else None


class TLSAcceptor:
    def __init__(self, contexts: ServerContexts, on_refused: RefusalHook | None = None) -> None:
        self.contexts = contexts
        self.on_refused = on_refused
        self.pending: set[asyncio.Task[None]] = set()
        # handshakes under way, oldest first, by holder (``holder``): bounded in all and per holder
        self.handshaking: dict[str | None, list[Any]] = {}
        self.under_way = 0
        self.shed = 0  # connections closed for the bounds since the last warning
        self._shed_logged = 0.0
        self._refusals_since, self._refusals_logged, self._refusals_unlogged = 0.0, 0, 0
        # connections open after their handshake, oldest first, by holder (a closed one dropped when counted)
        self.open: dict[str | None, list[Any]] = {}

    def admit(self, peer: str | None, transport: Any) -> bool:
        """Whether a new connection from ``peer`` may start its handshake now (counted until ``release``).
        Past the bound in all, the holder with the most handshakes under way gives up its oldest one, so a
        flood from a few addresses never keeps another client from connecting; a holder at its own bound, or
        as big as the biggest, gives up its own oldest (refused only holding none)."""
        holder = holder_of(peer)
        mine = self.handshaking.setdefault(holder, [])
        if len(mine) >= MAX_HANDSHAKES_PER_PEER:
            # the holder's oldest gives way, never its newest: every local client shares 127.0.0.1, and a
            # newcomer closed at once let one process holding the share with silent sockets (reopened as the
            # timeout closed them) keep every other client of the address out. A client's own handshake takes
            # a round trip or two; a silent one waits for ever, so it is the oldest that is dropped.
            # (the count in all stays as it was: one out, one in)
            self._shed(peer, len(mine))
            mine.pop(0).abort()  # its task ends with the handshake, and releases nothing more
            self.under_way -= 1
        elif self.under_way >= MAX_HANDSHAKES:
            biggest = max(self.handshaking, key=lambda h: len(self.handshaking[h]))
            theirs = self.handshaking[biggest]
            if len(theirs) <= len(mine) + 1:
                if not mine:
                    return self._shed(peer, len(mine))
                theirs = mine  # as big as the biggest: its own oldest gives way (a shared address, as above)
                self._shed(peer, len(mine))
            theirs.pop(0).abort()  # its task ends with the handshake, and releases nothing more
            self.under_way -= 1
        mine.append(transport)
        self.under_way += 1
        return True

    def keep_open(self, peer: str | None, transport: Any) -> bool:
        """Whether a connection whose handshake is done may stay open (counted while it is: a closed one is
        found by ``is_closing`` when the count matters, so no protocol change, a WebSocket upgrade say, can
        leave it counted). At its own bound, the holder's oldest idle connection (between requests) gives way
        (refused when each is serving); past the bound in all, the holder with the most open gives up its
        oldest."""
        holder = holder_of(peer)
        mine = self.open.setdefault(holder, [])
        mine[:] = [t for t in mine if not t.is_closing()]
        if len(mine) >= MAX_OPEN_PER_PEER:
            # the holder's oldest idle connection (between requests) gives way: every local client shares
            # 127.0.0.1, and idle connections, reopened as the head's time bound or keep-alive closed them,
            # kept every other client of the address out. One reading or answering a request (a stream) is
            # never cut for it
            idle = next((t for t in mine if between_requests(t.get_protocol())), None)
            if idle is None:
                return self._shed(peer, len(mine), "open")
            self._shed(peer, len(mine), "open")
            mine.remove(idle)
            idle.abort()
        elif sum(len(v) for v in self.open.values()) >= MAX_OPEN:
            for key in list(self.open):
                self.open[key] = [t for t in self.open[key] if not t.is_closing()]
                if not self.open[key] and key != holder:
                    del self.open[key]
            if sum(len(v) for v in self.open.values()) >= MAX_OPEN:
                biggest = max(self.open, key=lambda h: len(self.open[h]))
                theirs = self.open[biggest]
                if len(theirs) <= len(mine) + 1:
                    return self._shed(peer, len(mine), "open")
                theirs.pop(0).abort()
        mine.append(transport)
        return True

    def open_count(self) -> int:
        return sum(1 for v in self.open.values() for t in v if not t.is_closing())

    def release(self, peer: str | None, transport: Any) -> None:
        holder = holder_of(peer)
        mine = self.handshaking.get(holder)
        if mine is not None and transport in mine:
            mine.remove(transport)
            self.under_way -= 1
        if not mine:
            self.handshaking.pop(holder, None)

    def _shed(self, peer: str | None, mine: int, what: str = "handshaking") -> bool:
        for table in (self.handshaking, self.open):
            if not table.get(holder_of(peer)):
                table.pop(holder_of(peer), None)
        self.shed += 1
        now = time.monotonic()
        if now - self._shed_logged >= SHED_LOG_SECONDS:
            log.warning(
                "TLS: %d connection(s) closed for the bounds: too many connections %s (%d handshaking and "
                "%d open in all, %d from %s)", self.shed, what, self.under_way, self.open_count(), mine, peer
            )
            self.shed, self._shed_logged = 0, now
        return False

    def handshake_failed(self, peer: str | None, exc: BaseException) -> None:
        reason = describe_refusal(exc)
        if reason is None:
            # a plaintext client, a scanner, a timeout or a client that went away: not about a certificate
            log.debug("TLS handshake with %s failed: %s", peer, exc)
            return
        now = time.monotonic()
        if now - self._refusals_since >= REFUSAL_LOG_SECONDS:
            if self._refusals_unlogged:
                log.warning("TLS: %d more refused handshake(s) not logged one by one (the audit log has "
                            "them, bounded)", self._refusals_unlogged)
            self._refusals_since, self._refusals_logged, self._refusals_unlogged = now, 0, 0
        if self._refusals_logged < REFUSALS_LOGGED:
            self._refusals_logged += 1
            log.warning("TLS: %s refused: %s", peer, reason)
        else:  # a scanner's every handshake would be a line: the log is bounded as the audit is
            self._refusals_unlogged += 1
        if self.on_refused is not None:
            self.on_refused(peer, reason)

    def uvicorn_options(self, http_base: type | None = None, ws_base: type | None = None) -> dict[str, Any]:
        """``http=``/``ws=`` for ``uvicorn.Config`` (and no ``ssl_*``: TLS is terminated here); ``http_base``:
        the HTTP protocol run after the handshake (uvicorn's automatic choice by default); ``ws_base``: the
        WebSocket protocol, likewise."""
        from uvicorn.protocols.http.auto import AutoHTTPProtocol
        from uvicorn.protocols.websockets.auto import AutoWebSocketsProtocol

        http_class = with_tls_scope(http_base or AutoHTTPProtocol, self.contexts)

        def http_factory(**kw: Any) -> asyncio.Protocol:
            return _Handshake(self, lambda: http_class(**kw))

        options: dict[str, Any] = {"http": http_factory}
        ws_class: Any = ws_base or AutoWebSocketsProtocol  # (uvicorn's is None without a WebSocket library)
        if ws_class is not None:
            options["ws"] = with_tls_scope(ws_class, self.contexts)
        return options

    async def close(self) -> None:
        for task in list(self.pending):
            task.cancel()
        if self.pending:
            await asyncio.gather(*self.pending, return_exceptions=True)
