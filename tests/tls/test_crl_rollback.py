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


def test_what_counts_as_going_back(pki: Pki) -> None:
    import datetime as dt

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec

    from sentinel_mcp.tls.crl_freshness import freshness, rolled_back

    a, b = "a" * 64, "b" * 64
    both = {a, b}
    in_force = {a: (5, 100.0, None), b: (-1, 100.0, None)}
    assert rolled_back(in_force, {a: (6, 50.0, None), b: (-1, 101.0, None)}, both) is None
    assert "older" in (rolled_back(in_force, {a: (4, 200.0, None), b: (-1, 100.0, None)}, both) or "")
    assert "no longer holds" in (rolled_back(in_force, {a: (5, 100.0, None)}, both) or "")
    assert rolled_back(in_force, {a: (5, 100.0, None)}, {a}) is None  # b left the bundle: its CRL may go
    # a CRL naming the CA but signed by another key counts for nothing, whatever number it claims
    ca_cert, _ = pki.ca._load()
    now = dt.datetime.now(dt.timezone.utc)
    forged = (
        x509.CertificateRevocationListBuilder()
        .issuer_name(ca_cert.subject)
        .last_update(now)
        .next_update(now + dt.timedelta(days=1))
        .add_extension(x509.CRLNumber(10**30), critical=False)
        .sign(ec.generate_private_key(ec.SECP256R1()), hashes.SHA256())
    )
    real = x509.load_pem_x509_crl(pki.ca.crl_path.read_bytes())
    fresh = freshness([forged, real], [ca_cert])
    number = real.extensions.get_extension_for_class(x509.CRLNumber).value.crl_number
    assert [stamp[0] for stamp in fresh.values()] == [number]
