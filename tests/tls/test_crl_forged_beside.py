"""Every CRL of a CRL file (or of the ``ca`` bundle) under the name of a CA of the bundle must be signed by
that CA, not the first alone (red team "tls10").

Only the file's first CRL was checked for its signature. A second one, written by anybody under the CA's
name, was taken: its serials counted as revoked on every request, and OpenSSL, which prefers the CRL with the
latest lastUpdate, picked it in the handshake and failed on its signature, refusing every client of that CA.
A CRL is often fetched over plain HTTP: whoever sits on that path could revoke any certificate, or all of
them, with a CRL of their own making appended to the real one, although only the CA may revoke. Now such a
file is refused, naming the CRL, at start and when it changes (the CRL in force keeps serving). A CRL of
another issuer (an intermediate CA the clients send along: its certificate is not in the bundle to check it
with) is still taken: it concerns only chains through that CA, which the bundle's own checks refuse."""

from __future__ import annotations

import datetime as dt
import ssl
from pathlib import Path

import httpx2
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from sentinel_mcp.tls.peer_certificate import from_pem
from sentinel_mcp.tls.server_context import FrontTLS, ServerContexts, TLSSetupError
from tests.tls.conftest import Pki
from tests.tls.tls_rig import front_in_process

pytestmark = pytest.mark.timeout(120)


def _forged(pki: Pki, serials: list[int], *, issuer: x509.Name | None = None, key: object = None) -> bytes:
    """A CRL under the CA's name (by default), newer than the real one, signed by a key of the forger's."""
    ca = x509.load_pem_x509_certificate(pki.ca.ca_cert_path.read_bytes())
    now = dt.datetime.now(dt.timezone.utc)
    builder = (
        x509.CertificateRevocationListBuilder().issuer_name(issuer or ca.subject)
        .last_update(now).next_update(now + dt.timedelta(days=7))
        .add_extension(x509.CRLNumber(int(now.timestamp() * 1000) + 10**6), critical=False)
    )
    for serial in serials:
        builder = builder.add_revoked_certificate(
            x509.RevokedCertificateBuilder().serial_number(serial).revocation_date(now).build())
    signer = key or ec.generate_private_key(ec.SECP256R1())
    return builder.sign(signer, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)  # type: ignore[arg-type]


async def _subject(port: int, pki: Pki, who: object) -> str:
    ctx = ssl.create_default_context(cafile=str(pki.ca.ca_cert_path))
    ctx.load_cert_chain(str(who.cert), str(who.key))  # type: ignore[attr-defined]
    async with httpx2.AsyncClient(verify=ctx, timeout=10) as client:
        return (await client.get(f"https://localhost:{port}/")).text


@pytest.mark.parametrize("where", ["crl", "ca"])
def test_a_forged_crl_beside_the_real_one_is_refused_naming_it(pki: Pki, tmp_path: Path, where: str) -> None:
    forged = _forged(pki, [pki.alice.serial, pki.bob.serial])
    real = pki.ca.crl_path.read_bytes()
    path = tmp_path / f"{where}.pem"
    if where == "crl":
        path.write_bytes(real + forged)
        tls = FrontTLS(pki.server.cert, pki.server.key, pki.ca.ca_cert_path, path, "optional")
    else:
        path.write_bytes(pki.ca.ca_cert_path.read_bytes() + real + forged)
        tls = FrontTLS(pki.server.cert, pki.server.key, path, None, "optional")
    with pytest.raises(TLSSetupError, match="CRL 2 .* not signed by a CA") as refused:
        ServerContexts(tls)
    assert str(path) in str(refused.value)


@pytest.mark.parametrize("signer", ["a stranger's key", "another CA's key, the CA's name",
                                    "another CA, its own name"])
async def test_a_forged_crl_in_a_changed_file_revokes_nobody(pki: Pki, tmp_path: Path, signer: str) -> None:
    crl = tmp_path / "crl.pem"
    crl.write_bytes(pki.ca.crl_path.read_bytes())
    serials = [pki.alice.serial, pki.bob.serial]
    if signer == "a stranger's key":
        forged = _forged(pki, serials)
    else:
        other = pki.other_ca
        other_key = serialization.load_pem_private_key(other.ca_key_path.read_bytes(), None)
        other_name = x509.load_pem_x509_certificate(other.ca_cert_path.read_bytes()).subject
        forged = _forged(pki, serials, key=other_key,
                         issuer=other_name if signer == "another CA, its own name" else None)
    async with front_in_process(FrontTLS(pki.server.cert, pki.server.key, pki.ca.ca_cert_path, crl,
                                         "optional")) as (port, acceptor):
        assert await _subject(port, pki, pki.alice) == "CN=alice,O=Sentinel"
        crl.write_bytes(pki.ca.crl_path.read_bytes() + forged)
        acceptor.contexts.reload_now()
        if signer == "another CA, its own name":  # an issuer outside the bundle: taken, revoking its own only
            assert not any("not signed" in w for w in acceptor.contexts.warnings), acceptor.contexts.warnings
        else:
            assert "not signed by a CA" in acceptor.contexts.warnings[0]
        for who in (pki.alice, pki.bob):
            assert not acceptor.contexts.is_revoked(from_pem(who.cert.read_text()))
            assert await _subject(port, pki, who) == f"CN={who.name},O=Sentinel"


def test_two_crls_both_signed_by_the_ca_still_load(pki: Pki, tmp_path: Path) -> None:
    older = pki.ca.crl_path.read_bytes()
    pki.ca.revoke("bob")
    crl = tmp_path / "crl.pem"
    crl.write_bytes(older + pki.ca.crl_path.read_bytes())
    contexts = ServerContexts(FrontTLS(pki.server.cert, pki.server.key, pki.ca.ca_cert_path, crl, "optional"))
    assert contexts.is_revoked(from_pem(pki.bob.cert.read_text()))
