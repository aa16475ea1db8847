"""A CRL file is never taken back in time (red team "tls2"). A CRL is public data, often fetched over plain
HTTP: whoever is on that path cannot forge one (it is signed), but can hand back an older one, still signed
and still within its nextUpdate, that lacks the revocations made since. Such a file was taken on the next
connection: a certificate revoked since was admitted again, in the handshake and on kept-alive connections.
Now a changed CRL file whose CRL for a CA of the bundle is older than the one in force (by CRL number, else
lastUpdate), or that no longer holds one, is refused, and the previous one keeps serving (as any changed TLS
file that cannot be used); a newer one is taken as before."""

from __future__ import annotations

import ssl

import httpx2
import pytest

from sentinel_mcp.tls.peer_certificate import from_pem
from sentinel_mcp.tls.server_context import FrontTLS
from tests.tls.conftest import Pki
from tests.tls.tls_rig import front_in_process

pytestmark = pytest.mark.timeout(120)


async def test_an_older_crl_put_back_lifts_no_revocation(pki: Pki) -> None:
    bob = pki.bob
    replayed = pki.ca.crl_path.read_bytes()  # signed, valid, and older: it does not revoke bob
    pki.ca.revoke("bob")
    tls = FrontTLS(pki.server.cert, pki.server.key, pki.ca.ca_cert_path, pki.ca.crl_path, "optional")
    async with front_in_process(tls) as (port, acceptor):
        contexts = acceptor.contexts

        async def who(issued: object) -> str:
            ctx = ssl.create_default_context(cafile=str(pki.ca.ca_cert_path))
            ctx.load_cert_chain(str(issued.cert), str(issued.key))  # type: ignore[attr-defined]
            async with httpx2.AsyncClient(verify=ctx, timeout=30) as client:
                return (await client.get(f"https://127.0.0.1:{port}/")).text

        assert await who(pki.alice) == "CN=alice,O=Sentinel"
        with pytest.raises((httpx2.HTTPError, ssl.SSLError), match="revoked"):
            await who(bob)

        pki.ca.crl_path.write_bytes(replayed)  # the older CRL, handed back
        contexts.reload_now()
        assert contexts.is_revoked(from_pem(bob.cert.read_text()))  # a kept-alive connection's check
        with pytest.raises((httpx2.HTTPError, ssl.SSLError), match="revoked"):
            await who(bob)
        assert any("older" in w for w in contexts.warnings), contexts.warnings

        pki.ca.revoke("carol")  # a newer CRL: taken, as before
        contexts.reload_now()
        assert not any("older" in w for w in contexts.warnings), contexts.warnings
        for revoked in (bob, pki.carol):
            with pytest.raises((httpx2.HTTPError, ssl.SSLError), match="revoked"):
                await who(revoked)
        assert await who(pki.alice) == "CN=alice,O=Sentinel"
