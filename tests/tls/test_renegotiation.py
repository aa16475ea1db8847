"""A TLS 1.2 client cannot renegotiate with the front (red team "tls10").

A renegotiation is a whole handshake inside a connection that has already passed the bounds on handshakes
(their count and ``handshake_timeout``): a client may ask for one after another, each costing the front a
signature, and may present another certificate in it than the one its requests are answered for. OpenSSL 3
refuses a client's renegotiation unless told otherwise; OpenSSL 1.1.1, which Python 3.11 may still be built
with, allows it. The front's context says ``OP_NO_RENEGOTIATION`` itself, and this test asks with
``openssl s_client`` (its ``R`` command) and reads the refusal."""

from __future__ import annotations

import asyncio
import shutil
import ssl

import pytest

from sentinel_mcp.tls.server_context import FrontTLS, build_server_context
from tests.tls.conftest import Pki
from tests.tls.tls_rig import front_in_process

pytestmark = pytest.mark.timeout(120)


def test_the_front_context_refuses_renegotiation(pki: Pki) -> None:
    ctx, *_ = build_server_context(FrontTLS(pki.server.cert, pki.server.key, pki.ca.ca_cert_path,
                                            pki.ca.crl_path, "optional"))
    assert ctx.options & ssl.OP_NO_RENEGOTIATION


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
async def test_a_client_renegotiation_is_refused_and_its_request_never_answered(pki: Pki) -> None:
    tls = FrontTLS(pki.server.cert, pki.server.key, pki.ca.ca_cert_path, pki.ca.crl_path, "optional")
    async with front_in_process(tls) as (port, _):
        proc = await asyncio.create_subprocess_exec(
            "openssl", "s_client", "-tls1_2", "-connect", f"127.0.0.1:{port}", "-servername", "localhost",
            "-cert", str(pki.alice.cert), "-key", str(pki.alice.key), "-CAfile", str(pki.ca.ca_cert_path),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )
        assert proc.stdin is not None and proc.stdout is not None
        shown = b""
        while b"Verify return code" not in shown:  # the first handshake is done
            line = await asyncio.wait_for(proc.stdout.readline(), 30)
            assert line, shown.decode(errors="replace")
            shown += line
        # "R" asks for a renegotiation; then a request on what would be the renegotiated session
        proc.stdin.write(b"R\nGET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        await proc.stdin.drain()
        proc.stdin.close()
        rest = await asyncio.wait_for(proc.stdout.read(), 30)
        await proc.wait()
    text = rest.decode(errors="replace")
    assert "RENEGOTIATING" in text, text
    assert "no renegotiation" in text, text  # the front's alert
    assert "CN=alice,O=Sentinel" not in text and "HTTP/1.1 200" not in text, text
