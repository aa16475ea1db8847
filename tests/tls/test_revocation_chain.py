"""Revocation counts along the whole chain and in every CRL of the file (red team "tls", findings 2 and 3).

- The handshake checked the client's certificate alone against the CRLs (``VERIFY_CRL_CHECK_LEAF``): an
  intermediate CA revoked by its root still admitted every certificate it signed, the owner's subject
  included.
- The per-request check (a kept-alive connection outlives a revocation) read the first CRL of the file only:
  a certificate revoked by the second one was refused in new handshakes but kept its open connection.
"""

from __future__ import annotations

import datetime as dt
import ssl
from pathlib import Path
from typing import Any

import httpx2
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from tests.tls.tls_rig import front_in_process

from sentinel_mcp.tls.peer_certificate import from_pem
from sentinel_mcp.tls.server_context import FrontTLS, ServerContexts

NOW = dt.datetime.now(dt.timezone.utc)


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Sentinel"),
                      x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _cert(
    subject: str, issuer: tuple[x509.Name, Any] | None, *, ca: bool, client: bool = True
) -> tuple[Any, Any]:
    key = ec.generate_private_key(ec.SECP256R1())
    issuer_name, issuer_key = issuer or (_name(subject), key)
    usage = dict.fromkeys(("content_commitment", "key_encipherment", "data_encipherment", "key_agreement",
                           "encipher_only", "decipher_only"), False)
    builder = (
        x509.CertificateBuilder().subject_name(_name(subject)).issuer_name(issuer_name)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(NOW - dt.timedelta(minutes=5)).not_valid_after(NOW + dt.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=not ca, key_cert_sign=ca, crl_sign=ca, **usage),
                       critical=True)
    )
    if not ca:
        eku = ExtendedKeyUsageOID.CLIENT_AUTH if client else ExtendedKeyUsageOID.SERVER_AUTH
        builder = builder.add_extension(x509.ExtendedKeyUsage([eku]), critical=False)
        if not client:
            builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), False)
    return builder.sign(issuer_key, hashes.SHA256()), key


def _crl(issuer: tuple[x509.Name, Any], *revoked: int) -> bytes:
    builder = (x509.CertificateRevocationListBuilder().issuer_name(issuer[0])
               .last_update(NOW - dt.timedelta(minutes=5)).next_update(NOW + dt.timedelta(days=30)))
    for serial in revoked:
        builder = builder.add_revoked_certificate(
            x509.RevokedCertificateBuilder().serial_number(serial).revocation_date(NOW).build())
    return builder.sign(issuer[1], hashes.SHA256()).public_bytes(serialization.Encoding.PEM)


def _pem(*certs: Any) -> bytes:
    return b"".join(c.public_bytes(serialization.Encoding.PEM) for c in certs)


def _key_pem(key: Any) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


@pytest.fixture
def chain(tmp_path: Path) -> dict[str, Any]:
    """A root, an intermediate it signed (revoked by the root's CRL), the owner's certificate from that
    intermediate, alice's from the root, and a server certificate."""
    root, root_key = _cert("Root", None, ca=True)
    inter, inter_key = _cert("Intermediate", (root.subject, root_key), ca=True)
    owner, owner_key = _cert("owner", (inter.subject, inter_key), ca=False)
    alice, alice_key = _cert("alice", (root.subject, root_key), ca=False)
    server, server_key = _cert("localhost", (root.subject, root_key), ca=False, client=False)
    files = {
        "root": _pem(root), "server": _pem(server), "server-key": _key_pem(server_key),
        "owner": _pem(owner, inter), "owner-key": _key_pem(owner_key),
        "alice": _pem(alice), "alice-key": _key_pem(alice_key),
        "crl": _crl((root.subject, root_key), inter.serial_number) + _crl((inter.subject, inter_key)),
    }
    for stem, data in files.items():
        (tmp_path / f"{stem}.pem").write_bytes(data)
    return {"dir": tmp_path, "root": (root, root_key), "inter": inter, "alice": alice}


async def test_a_revoked_intermediate_admits_nothing_it_signed(chain):
    d = chain["dir"]
    tls = FrontTLS(d / "server.pem", d / "server-key.pem", d / "root.pem", d / "crl.pem", "optional")
    async with front_in_process(tls) as (port, _):

        async def who(stem: str) -> str:
            ctx = ssl.create_default_context(cafile=str(d / "root.pem"))
            ctx.load_cert_chain(str(d / f"{stem}.pem"), str(d / f"{stem}-key.pem"))
            async with httpx2.AsyncClient(verify=ctx, timeout=10) as client:
                return (await client.get(f"https://localhost:{port}/")).text

        assert await who("alice") == "CN=alice,O=Sentinel"
        with pytest.raises((httpx2.HTTPError, ssl.SSLError), match="revoked"):
            await who("owner")


def test_every_crl_of_the_file_counts_on_kept_alive_connections(chain, pki):
    """The front's bundle holds two CAs, each with its CRL; the second CRL revokes alice's certificate."""
    d = chain["dir"]
    root, root_key = chain["root"]
    (d / "bundle.pem").write_bytes(pki.ca.ca_cert_path.read_bytes() + _pem(root))
    (d / "crls.pem").write_bytes(
        pki.ca.crl_path.read_bytes() + _crl((root.subject, root_key), chain["alice"].serial_number)
    )
    contexts = ServerContexts(
        FrontTLS(d / "server.pem", d / "server-key.pem", d / "bundle.pem", d / "crls.pem", "optional")
    )
    assert contexts.is_revoked(from_pem(_pem(chain["alice"]).decode()))
    assert contexts.is_revoked(from_pem(pki.revoked.cert.read_text()))  # the first CRL's, as before
    assert not contexts.is_revoked(from_pem(pki.alice.cert.read_text()))
