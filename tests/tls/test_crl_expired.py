"""A CRL past its nextUpdate makes OpenSSL refuse every client certificate in the handshake; a kept-alive
connection (or an open stream) made before is refused too, per request (red team "tls2"). It was served on:
a CRL whose refresh is held back (it is often fetched over plain HTTP) kept every open connection of a
certificate revoked meanwhile working."""

from __future__ import annotations

import datetime as dt

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization

from sentinel_mcp.identity.certificates import CertificateResolver
from sentinel_mcp.identity.credentials import Credentials
from sentinel_mcp.identity.principal import Principal
from sentinel_mcp.identity.resolver import AuthFailed
from sentinel_mcp.tls.server_context import FrontTLS, ServerContexts
from sentinel_mcp.tls.settings import CertificateMatch
from tests.tls.conftest import Pki


def _expired_crl(pki: Pki) -> bytes:
    """A CRL the CA signed, newer than the one in force, whose nextUpdate has passed."""
    ca_cert, ca_key = pki.ca._load()
    now = dt.datetime.now(dt.timezone.utc)
    crl = (
        x509.CertificateRevocationListBuilder()
        .issuer_name(ca_cert.subject)
        .last_update(now - dt.timedelta(hours=2))
        .next_update(now - dt.timedelta(hours=1))
        .add_extension(x509.CRLNumber(int(now.timestamp() * 1000) + 1), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return crl.public_bytes(serialization.Encoding.PEM)


def test_a_kept_alive_connection_is_refused_once_the_crl_has_expired(pki: Pki) -> None:
    contexts = ServerContexts(
        FrontTLS(pki.server.cert, pki.server.key, pki.ca.ca_cert_path, pki.ca.crl_path, "optional")
    )
    resolver = CertificateResolver(
        [(CertificateMatch(subject="CN=alice,O=Sentinel"), Principal("alice", "certificate"))],
        "optional",
        is_revoked=contexts.is_revoked,
        trusted_cas=contexts.trusted_cas,
        crl_problem=contexts.crl_problem,
    )
    alice = Credentials(peer="192.0.2.9", tls={"client_cert_chain": [pki.alice.cert.read_text()]})
    assert resolver.resolve(alice).name == "alice"
    pki.ca.crl_path.write_bytes(_expired_crl(pki))
    contexts.reload_now()
    assert any("expires" in w for w in contexts.warnings), contexts.warnings
    with pytest.raises(AuthFailed, match="CRL .* expired"):
        resolver.resolve(alice)
    pki.ca.write_crl()  # a fresh one: served again
    contexts.reload_now()
    assert resolver.resolve(alice).name == "alice"
