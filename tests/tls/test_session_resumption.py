"""Resumed TLS sessions on the front (red team "tls10").

TLS 1.2 session tickets are sealed with a key that lives as long as the front's context, which is kept until
a file changes (months, for a front whose files do not): whoever reads that key from the process, or a core
file, decrypts every recorded TLS 1.2 session of that time, forward secrecy or not. So no sealed ticket is
issued (``OP_NO_TICKET``): a client resumes from the front's own session cache instead (per context: a
changed CA or CRL file starts a new one; a TLS 1.3 ticket then only names a session of it).
Either way a resumed session is the certificate its first handshake verified, and a changed CRL ends it."""

from __future__ import annotations

import asyncio
import socket
import ssl
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.tls.server_context import FrontTLS
from tests.tls.conftest import Pki
from tests.tls.tls_rig import front_in_process

pytestmark = pytest.mark.timeout(120)


def _get(port: int, ctx: ssl.SSLContext, session: ssl.SSLSession | None = None
         ) -> tuple[str, ssl.SSLSession, bool]:
    """``GET /`` on a fresh connection (blocking): the subject the front answers, the session, and whether
    it was resumed."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
        with ctx.wrap_socket(raw, server_hostname="localhost", session=session) as tls:
            tls.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            answer = b""
            while chunk := tls.recv(4096):
                answer += chunk
            session_now = tls.session
            assert session_now is not None
            return answer.rpartition(b"\r\n\r\n")[2].decode(), session_now, tls.session_reused


def _client(pki: Pki, version: ssl.TLSVersion, who: Any = None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(pki.ca.ca_cert_path))
    ctx.minimum_version = ctx.maximum_version = version
    if who is not None:
        ctx.load_cert_chain(str(who.cert), str(who.key))
    return ctx


async def test_tls12_gets_no_ticket_and_resumes_from_the_cache_as_itself(pki: Pki) -> None:
    tls = FrontTLS(pki.server.cert, pki.server.key, pki.ca.ca_cert_path, pki.ca.crl_path, "optional")
    async with front_in_process(tls) as (port, _):
        alice = _client(pki, ssl.TLSVersion.TLSv1_2, pki.alice)
        first, session, reused = await asyncio.to_thread(_get, port, alice)
        assert (first, reused) == ("CN=alice,O=Sentinel", False)
        assert not session.has_ticket
        again, _, reused = await asyncio.to_thread(_get, port, alice, session)
        assert (again, reused) == ("CN=alice,O=Sentinel", True)


@pytest.mark.parametrize("version", [ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3])
async def test_a_session_does_not_outlive_a_changed_crl(pki: Pki, tmp_path: Path, version: ssl.TLSVersion
                                                        ) -> None:
    """A CRL that revokes the session's certificate starts a new context: the session is not resumed, and the
    new handshake refuses the certificate."""
    crl = tmp_path / "crl.pem"
    crl.write_bytes(pki.ca.crl_path.read_bytes())
    tls = FrontTLS(pki.server.cert, pki.server.key, pki.ca.ca_cert_path, crl, "optional")
    async with front_in_process(tls) as (port, acceptor):
        bob = _client(pki, version, pki.bob)
        _, session, _ = await asyncio.to_thread(_get, port, bob)
        got, session, reused = await asyncio.to_thread(_get, port, bob, session)
        assert (got, reused) == ("CN=bob,O=Sentinel", True)
        pki.ca.revoke("bob")
        crl.write_bytes(pki.ca.crl_path.read_bytes())
        acceptor.contexts.reload_now()
        with pytest.raises((ssl.SSLError, ConnectionError)):
            await asyncio.to_thread(_get, port, bob, session)
