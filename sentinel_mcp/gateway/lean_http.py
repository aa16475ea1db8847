"""A small HTTP/1.1 client for the lean upstream calls: one POST (or a GET resuming an event stream) on a
kept-alive connection, read by httptools' C parser (llhttp) on an asyncio protocol.

httpx2/httpcore2 cost the gateway about as much CPU per forwarded call as the upstream spends on it: two
socket writes per request, h11's event machinery in Python, and a readability check (a ``select`` system
call) of every pooled connection for every request. Here a request is one ``transport.write`` and the answer
is parsed in C as it arrives. It does only what the lean path needs: POST with a body (GET without), status,
headers and a body read chunk by chunk; keep-alive; a URL's user name and password sent as Basic auth (as
httpx2 sends them, ``core/url_basic_auth.py``); TLS with the context Sentinel's TLS settings build (its
pins checked in the handshake, as for httpx2). Redirects are not followed, no proxy is spoken (``proxied``
says when the environment names one; the lean path then stays off), no content coding is asked for or
accepted.

The server is hostile: a response head over ``MAX_HEAD_BYTES``, a ``Transfer-Encoding`` other than
``chunked``, a ``Content-Encoding`` other than ``identity``, a framing error or a connection that ends before
the answer does is an ``HttpFault``; a connection is reused only after an answer read to its end that the
server did not close. What is buffered is bounded (reading pauses past ``MAX_BUFFERED``); how long anything
takes is bounded by the caller's deadline (a cancelled read closes its connection).
"""

from __future__ import annotations

import asyncio
import os
import ssl
import time
import urllib.request
from collections import deque
from typing import AsyncGenerator, Callable
from urllib.parse import urlsplit

import httptools

from sentinel_mcp.core.errors import GatewayError
from sentinel_mcp.core.running_loop import running_loop
from sentinel_mcp.core.url_basic_auth import basic_authorization, credentials_problem

MAX_HEAD_BYTES = 64 * 1024  # a response's status line and headers
MAX_BUFFERED = 256 * 1024  # received and not yet consumed: reading pauses past this
IDLE_SECONDS = 4.0  # a kept-alive connection idle longer is closed, not reused (servers close at ~5 s)
MAX_CONNECTIONS = 64
MAX_IDLE_CONNECTIONS = 32
DRAIN_SECONDS = 1.0  # the rest of an answer read after the caller has what it needs...
DRAIN_BYTES = 64 * 1024  # ...and how much of it, before the connection is closed instead of reused
# set per request; a configured header of the same name would duplicate or contradict them
REQUEST_HEADERS = {"host", "content-length", "transfer-encoding", "connection", "content-type", "accept",
                   "mcp-session-id", "mcp-protocol-version", "mcp-method", "mcp-name"}


class HttpFault(GatewayError):
    """The connection failed, or the server's answer broke HTTP/1.1 (the connection is closed)."""


class HeaderRefused(HttpFault):
    """A request header could split the request: nothing was sent (the connection is fine)."""


def proxied(url: str) -> bool:
    """True when the environment names a proxy for ``url`` (httpx2 would use it; the lean client cannot)."""
    parts = urlsplit(url)
    proxies = urllib.request.getproxies_environment()
    if not (proxies.get(parts.scheme) or proxies.get("all")):
        return False
    # the check urllib's own opener makes (its no_proxy rules); not in typeshed's stubs
    bypass = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]
    return not bypass(parts.hostname or "", proxies)


def _checked(text: str) -> bytes:
    """A header name or value as bytes; one that could split or end the request head, or is not latin-1
    text (what HTTP/1.1 fields carry), is refused."""
    try:
        data = text.encode("latin-1")
    except UnicodeEncodeError:
        raise HeaderRefused("a request header is not latin-1 text; not sent") from None
    if b"\r" in data or b"\n" in data or b"\0" in data:
        raise HeaderRefused("a request header holds a line break or NUL; not sent")
    return data


# header lines already checked (``_checked`` name and value): a request sends the same few on every call. A
# refused header is never kept (it is refused again each time); the table stops growing at its bound (then a
# line is checked each time, as before), so values that vary per call (``Mcp-Param-*``) cost at most that.
_LINES: dict[tuple[str, str], bytes] = {}
MAX_LINES_KEPT, MAX_KEPT_LINE = 256, 512


def header_lines(headers: dict[str, str]) -> bytes:
    """``name: value\r\n`` for each header, each as ``_checked`` checks it (``HeaderRefused`` the same)."""
    lines = []
    for pair in headers.items():
        line = _LINES.get(pair)
        if line is None:
            name, value = pair
            line = _checked(name) + b": " + _checked(value) + b"\r\n"
            if len(line) <= MAX_KEPT_LINE and len(_LINES) < MAX_LINES_KEPT:
                _LINES[pair] = line
        lines.append(line)
    return b"".join(lines)


class _Connection(asyncio.Protocol):
    """One TCP (or TLS) connection and the answer being read on it."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.lost = False
        self.idle = False  # kept in the pool: the server has nothing to say until the next request
        self.idle_since = 0.0
        # the rest of an answer its caller left before the end, read and dropped by the callbacks themselves
        # (no task, no generator: most event-stream answers of the handshake era end so, one per call); told
        # to ``drained(self)`` when it ends, is too long or too slow, or the connection goes
        self.drained: Callable[[_Connection], None] | None = None
        self.drain_left = 0
        self.drain_timer: asyncio.TimerHandle | None = None
        self._reset()

    def _reset(self) -> None:
        self.status = 0
        self.headers: dict[str, str] = {}
        self.set_cookies: list[str] = []  # each field apart: a comma may sit inside one (an Expires date)
        self.head_bytes = 0  # received while the head is incomplete
        self.head_fields = 0
        self.head_done = False
        self.keep_alive = False
        self.complete = False
        self.chunks: deque[bytes] = deque()
        self.buffered = 0
        self.paused = False
        self.fault: HttpFault | None = None
        self.refused: str | None = None  # why a parser callback refused the answer
        self.unasked = False  # bytes after the answer: the start of an answer to nothing
        self.wake: asyncio.Future[None] | None = None

    # ------------------------------------------------------------------ asyncio
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if self.idle:  # bytes nobody asked for: this connection's framing can no longer be trusted
            self.close()
            return
        if self.fault is not None:
            return
        if not self.head_done:
            self.head_bytes += len(data)
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail("the server switched protocols")
        except httptools.HttpParserError as e:  # a callback's refusal comes out wrapped: say what it was
            self._fail(self.refused or f"malformed HTTP answer: {str(e)[:200]}")
        if not self.head_done and self.head_bytes > MAX_HEAD_BYTES and self.fault is None:
            self._fail(f"answer head larger than {MAX_HEAD_BYTES} bytes")
        if self.drained is not None:
            self._drain_step()
            return
        if self.buffered > MAX_BUFFERED and not self.paused and self.transport is not None:
            self.paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool | None:
        return False  # close; connection_lost follows

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        if not self.complete and self.fault is None:
            why = type(exc).__name__ if exc else "EOF"
            self.fault = HttpFault(f"connection closed before the answer ended ({why})")
        if self.drained is not None:
            self._drain_end()
        self._wake()

    # ------------------------------------------------------------------ httptools callbacks
    def _refuse(self, why: str) -> None:
        self.refused = why
        raise ValueError(why)  # httptools turns it into HttpParserCallbackError

    def on_message_begin(self) -> None:
        if self.head_done:
            self.unasked = True

    def on_header(self, name: bytes, value: bytes) -> None:
        self.head_fields += len(name) + len(value) + 4  # a head that arrived whole in one read, as parsed
        if self.head_fields > MAX_HEAD_BYTES:
            self._refuse(f"answer head larger than {MAX_HEAD_BYTES} bytes")
        if self.head_done:  # a trailer field: the caller read the headers at the head; dropped, as h11 does
            return
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        if key == "transfer-encoding" and text.strip().lower() != "chunked":
            self._refuse(f"unsupported Transfer-Encoding {text[:40]!r}")
        if key == "content-encoding" and text.strip().lower() not in ("", "identity"):
            self._refuse(f"unsupported Content-Encoding {text[:40]!r} (none was asked for)")
        if key == "set-cookie":
            self.set_cookies.append(text)
        self.headers[key] = f"{self.headers[key]}, {text}" if key in self.headers else text

    def on_headers_complete(self) -> None:
        status = self.parser.get_status_code()
        if 100 <= status < 200:  # an interim answer: the real one follows on the same connection
            self.headers = {}
            self.set_cookies = []
            self.head_fields = 0
            return
        self.status = status
        self.keep_alive = self.parser.should_keep_alive()  # only meaningful while the message is parsed
        self.head_done = True

    def on_body(self, body: bytes) -> None:
        if self.drained is not None:
            self.drain_left -= len(body)
            return
        self.chunks.append(body)
        self.buffered += len(body)

    def on_message_complete(self) -> None:
        if self.head_done:
            self.complete = True

    # ------------------------------------------------------------------ the consumer's side
    def _fail(self, why: str) -> None:
        self.fault = HttpFault(why)
        if self.transport is not None:
            self.transport.abort()

    def _wake(self) -> None:
        if self.wake is not None and not self.wake.done():
            self.wake.set_result(None)

    async def _wait(self) -> None:
        # ``running_loop``: no ``getpid`` (asyncio's look-up on 3.11), once or more an answer (issue 21)
        self.wake = running_loop().create_future()
        try:
            await self.wake
        finally:
            self.wake = None

    async def head(self) -> None:
        while not self.head_done:
            if self.fault is not None:
                raise self.fault
            await self._wait()

    async def body(self) -> AsyncGenerator[bytes, None]:
        while True:
            while self.chunks:
                chunk = self.chunks.popleft()
                self.buffered -= len(chunk)
                if self.paused and self.buffered <= MAX_BUFFERED // 2 and self.transport is not None:
                    self.paused = False
                    self.transport.resume_reading()
                yield chunk
            if self.complete:
                return
            if self.fault is not None:
                raise self.fault
            await self._wait()

    def whole(self) -> bytes | None:
        """The body when all of it has arrived (a small answer comes in one read with its head), taken as
        ``body()`` would yield it to the end (reading resumed, nothing left buffered); else None."""
        if not self.complete:
            return None
        data = b"".join(self.chunks)
        self.chunks.clear()
        self.buffered = 0
        if self.paused and self.transport is not None:
            self.paused = False
            self.transport.resume_reading()
        return data

    def drain(self, drained: Callable[[_Connection], None], limit: int, seconds: float) -> None:
        """Read the rest of the answer beside the caller, at most ``limit`` bytes (what is buffered counts)
        for at most ``seconds``; then ``drained(self)`` (``reusable()`` says whether it ended well)."""
        self.drained = drained
        self.drain_left = limit - self.buffered
        self.chunks.clear()
        self.buffered = 0
        if self.paused and self.transport is not None:
            self.paused = False
            self.transport.resume_reading()
        self.drain_timer = asyncio.get_running_loop().call_later(seconds, self._drain_late)
        self._drain_step()

    def _drain_step(self) -> None:
        if self.fault is not None or self.lost or self.unasked or self.drain_left < 0:
            self.close()
            self._drain_end()
        elif self.complete:
            self._drain_end()

    def _drain_late(self) -> None:
        self.drain_timer = None
        if self.drained is not None:
            self.close()
            self._drain_end()

    def _drain_end(self) -> None:
        drained, self.drained = self.drained, None
        if self.drain_timer is not None:
            self.drain_timer.cancel()
            self.drain_timer = None
        if drained is not None:
            drained(self)

    def reusable(self) -> bool:
        return self.complete and not self.lost and self.keep_alive and not self.unasked

    def close(self) -> None:
        self.lost = True
        if self.transport is not None:
            self.transport.abort()


class HttpAnswer:
    """The status and headers of one answer; ``body()`` yields its bytes as they arrive."""

    def __init__(self, conn: _Connection) -> None:
        self._conn = conn
        self.status = conn.status
        self.headers = conn.headers  # names in lower case
        self.set_cookies = conn.set_cookies

    def body(self) -> AsyncGenerator[bytes, None]:
        return self._conn.body()

    def whole(self) -> bytes | None:
        """The whole body when it has all arrived (nothing to wait for), else None: read ``body()``."""
        return self._conn.whole()


class HttpPool:
    """Kept-alive connections to one origin, for POSTs to one URL."""

    def __init__(self, url: str, headers: dict[str, str], ssl_context: ssl.SSLContext | None,
                 connect_timeout: float) -> None:
        parts = urlsplit(url)
        self.host = parts.hostname or ""
        self.tls = parts.scheme == "https"
        self.port = parts.port or (443 if self.tls else 80)
        self.ssl = ssl_context if self.tls else None
        self.connect_timeout = connect_timeout
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        authority = parts.netloc.rpartition("@")[2]
        fixed = [b" " + _checked(path) + b" HTTP/1.1", b"host: " + _checked(authority)]
        fixed += [_checked(k) + b": " + _checked(v) for k, v in headers.items()
                  if k.lower() not in REQUEST_HEADERS]
        # the URL's user name and password as Basic auth, as the SDK's client sends them (the config refused
        # any it could not send as written, or beside a configured Authorization header)
        if credentials_problem(url, headers) is not None:
            raise HeaderRefused("the URL's user name or password cannot be sent as Basic auth; not sent")
        basic = basic_authorization(url)
        if basic is not None:
            fixed.append(b"authorization: " + _checked(basic))
        self._head = b"\r\n".join(fixed) + b"\r\n"  # after the method
        self._idle: list[_Connection] = []
        self._draining: set[_Connection] = set()
        self._slots = asyncio.Semaphore(MAX_CONNECTIONS)
        self._closed = False
        self.opened = 0  # connections made so far (a kept-alive pool makes few)

    async def _connection(self) -> _Connection:
        now = time.monotonic()
        while self._idle:
            conn = self._idle.pop()
            if not conn.lost and now - conn.idle_since < IDLE_SECONDS:
                conn.idle = False
                conn._reset()
                return conn
            conn.close()
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self.connect_timeout):
                _, protocol = await loop.create_connection(
                    _Connection, self.host, self.port, ssl=self.ssl,
                    server_hostname=self.host if self.ssl is not None else None)
        except TimeoutError:
            raise HttpFault(f"connect to {self.host}:{self.port} timed out") from None
        except (OSError, ssl.SSLError) as e:
            raise HttpFault(f"connect to {self.host}:{self.port}: {type(e).__name__}: {e}") from None
        self.opened += 1
        return protocol

    def request(self, method: str, body: bytes, headers: dict[str, str]) -> "_Request":
        """``async with pool.request(...) as answer``: ``method`` (POST with ``body``, or GET); the answer
        once its head arrived. Leaving with an error closes the connection; leaving before the answer's end
        (an event stream whose answer came) drains the rest beside the caller, bounded, before the
        connection is reused."""
        return _Request(self, method, body, headers)

    async def _open(self, method: str, body: bytes, headers: dict[str, str]) -> _Connection:
        """A connection of the pool (its slot taken) whose answer's head has arrived to ``method``."""
        if self._closed:
            raise HttpFault("the connection pool is closed")
        if method not in ("POST", "GET"):
            raise HttpFault(f"method {method[:20]!r} is not spoken here")
        extra = header_lines(headers)
        length = b"content-length: %d\r\n" % len(body) if method == "POST" else b""
        request = method.encode() + self._head + extra + length + b"\r\n" + body
        await self._slots.acquire()
        conn: _Connection | None = None
        try:
            conn = await self._connection()
            if conn.transport is None or conn.lost:
                raise HttpFault("connection closed before the request was sent")
            conn.transport.write(request)
            await conn.head()
        except BaseException:
            if conn is not None:
                conn.close()
            self._slots.release()
            raise
        return conn

    def _done(self, conn: _Connection, failed: bool) -> None:
        """The caller left the answer: its slot back; the connection kept, drained or closed."""
        if failed:
            conn.close()
        self._slots.release()
        if failed:
            return
        if conn.reusable():
            self._keep(conn)
        elif conn.fault is None and not conn.lost:
            self._draining.add(conn)
            conn.drain(self._drained, DRAIN_BYTES, DRAIN_SECONDS)
        else:
            conn.close()

    def _keep(self, conn: _Connection) -> None:
        if self._closed or len(self._idle) >= MAX_IDLE_CONNECTIONS:
            conn.close()
            return
        conn.idle = True
        conn.idle_since = time.monotonic()
        self._idle.append(conn)

    def _drained(self, conn: _Connection) -> None:
        self._draining.discard(conn)
        if conn.reusable():
            self._keep(conn)
        else:
            conn.close()

    async def aclose(self) -> None:
        self._closed = True
        while self._idle:
            self._idle.pop().close()
        for conn in list(self._draining):
            conn.close()
            conn._drain_end()


class _Request:
    """One request's stay in the pool (``HttpPool.request``): a plain class, not a generator-based context
    manager, whose per-call objects (an async generator, its finalizer hook, a context manager around the
    slot) cost some 12 Python calls a request (benchmarks/harness/work_counts.py)."""

    __slots__ = ("_pool", "_args", "_conn")

    def __init__(self, pool: HttpPool, method: str, body: bytes, headers: dict[str, str]) -> None:
        self._pool = pool
        self._args = (method, body, headers)
        self._conn: _Connection | None = None

    async def __aenter__(self) -> HttpAnswer:
        self._conn = await self._pool._open(*self._args)
        return HttpAnswer(self._conn)

    async def __aexit__(self, kind: type[BaseException] | None, *_: object) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            self._pool._done(conn, kind is not None)


def pool_for(url: str, headers: dict[str, str], ssl_context: ssl.SSLContext | None,
             connect_timeout: float) -> HttpPool | None:
    """A pool for ``url``, or None when the environment sends it through a proxy (or disables the path)."""
    if os.environ.get("SENTINEL_LEAN_UPSTREAM", "on") == "off" or proxied(url):
        return None
    return HttpPool(url, headers, ssl_context, connect_timeout)
