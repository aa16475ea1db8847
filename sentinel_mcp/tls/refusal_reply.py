"""How a refused TLS handshake is answered, so that the client can read why.

asyncio ends a failed handshake by closing the socket at once: OpenSSL's alert ("certificate expired",
"certificate revoked", "unknown ca", "certificate required") is still in the outgoing buffer and is dropped,
and a TLS 1.3 client, whose request is already on its way, gets a reset instead of a reason. So the context's
``SSLObject`` sends the alert itself when ``do_handshake`` fails, then closes the connection gracefully: the
socket is duplicated, its sending side shut (FIN after the alert), and what the client still sends is read
and dropped for a moment (a "lingering close"; closing with unread data would reset the connection and
destroy the alert). A plaintext HTTP request on the TLS port gets a readable 400 instead of an alert.
Lingering sockets are bounded in number and time; past the bound the connection is simply closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import ssl
from contextvars import ContextVar
from typing import Any

from sentinel_mcp.core.safe_headers import SAFE_HEAD_LINES

_BODY = b"This Sentinel speaks HTTPS only: use https:// (plaintext is refused).\n"
PLAINTEXT_REPLY = (b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nConnection: close\r\n"
                   + SAFE_HEAD_LINES + b"Content-Length: " + str(len(_BODY)).encode() + b"\r\n\r\n" + _BODY)
LINGER_SECONDS = 2.0
MAX_LINGERING = 64


class Lingering:
    """Sockets being closed gracefully (each read and dropped until EOF or ``LINGER_SECONDS``)."""

    def __init__(self) -> None:
        self.open: dict[int, socket.socket] = {}

    def close_after(self, sock: socket.socket) -> bool:
        if len(self.open) >= MAX_LINGERING:
            return False
        loop = asyncio.get_running_loop()
        fd = sock.fileno()
        self.open[fd] = sock

        def drain() -> None:
            try:
                if sock.recv(65536):
                    return
            except BlockingIOError:
                return
            except OSError:
                pass
            finish()

        def finish() -> None:
            if self.open.pop(fd, None) is not None:
                loop.remove_reader(fd)
                sock.close()

        loop.add_reader(fd, drain)
        loop.call_later(LINGER_SECONDS, finish)
        return True


LINGERING = Lingering()


class Connection:
    """The raw transport of one connection during its handshake."""

    def __init__(self, transport: Any) -> None:
        self.transport = transport

    def answer(self, reply: bytes) -> None:
        t = self.transport
        if not reply or t.is_closing():
            return
        raw = t.get_extra_info("socket")
        if raw is None or t.get_write_buffer_size():
            t.write(reply)  # (bytes still queued: keep the order, give up the graceful close)
            return
        try:
            sock = socket.socket(fileno=os.dup(raw.fileno()))
        except OSError:
            t.write(reply)
            return
        sock.setblocking(False)
        with contextlib.suppress(OSError):
            sock.send(reply)
            sock.shutdown(socket.SHUT_WR)
        if not LINGERING.close_after(sock):
            sock.close()


current_connection: ContextVar[Connection | None] = ContextVar("current_connection", default=None)


class AlertingSSLObject(ssl.SSLObject):
    sentinel_outgoing: ssl.MemoryBIO | None = None
    sentinel_connection: Connection | None = None

    def do_handshake(self) -> None:
        try:
            super().do_handshake()
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
            raise
        except ssl.SSLError as e:
            conn, outgoing = self.sentinel_connection, self.sentinel_outgoing
            if conn is not None and outgoing is not None:
                try:
                    conn.answer(PLAINTEXT_REPLY if e.reason == "HTTP_REQUEST" else outgoing.read())
                except Exception:  # noqa: BLE001 - the answer is a courtesy; the refusal stands
                    pass
            raise


class AlertingContext(ssl.SSLContext):
    sslobject_class = AlertingSSLObject

    def wrap_bio(self, incoming: ssl.MemoryBIO, outgoing: ssl.MemoryBIO, server_side: bool = False,
                 server_hostname: str | bytes | None = None, session: Any = None) -> ssl.SSLObject:
        obj = super().wrap_bio(incoming, outgoing, server_side, server_hostname, session)
        if isinstance(obj, AlertingSSLObject):
            obj.sentinel_outgoing = outgoing
            obj.sentinel_connection = current_connection.get()
        return obj
