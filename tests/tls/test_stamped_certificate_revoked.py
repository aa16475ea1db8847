"""A client certificate's stamp (``identity/credential_stamp.py``: what an A2A task waiting for an answer
keeps of the request that started it) is proved again by the front's certificate check as it is now: a
certificate revoked since (a new CRL), expired, of another CA, or naming another principal than the stamp
proves nobody. Real certificates, a real CRL, the front's real contexts (re-read when the CRL changes)."""

from __future__ import annotations

import pytest

from sentinel_mcp.identity.certificates import CertificateResolver
from sentinel_mcp.identity.credential_stamp import reprove, stamp_of
from sentinel_mcp.identity.credentials import Credentials
from sentinel_mcp.identity.principal import Principal
from sentinel_mcp.identity.resolver import Authenticator, AuthFailed, TokenResolver
from sentinel_mcp.tls.server_context import FrontTLS, ServerContexts
from sentinel_mcp.tls.settings import CertificateMatch
from tests.tls.conftest import Issued, Pki

ALICE, BOB = Principal("alice", "certificate"), Principal("bob", "certificate")


def _auth(pki: Pki) -> tuple[Authenticator, ServerContexts]:
    contexts = ServerContexts(
        FrontTLS(pki.server.cert, pki.server.key, pki.ca.ca_cert_path, pki.ca.crl_path, "optional")
    )
    certificates = CertificateResolver(
        [(CertificateMatch(subject="CN=alice,O=Sentinel"), ALICE),
         (CertificateMatch(subject="CN=bob,O=Sentinel"), BOB)],
        "optional",
        is_revoked=contexts.is_revoked,
        trusted_cas=contexts.trusted_cas,
        crl_problem=contexts.crl_problem,
    )
    return Authenticator([certificates, TokenResolver()]), contexts


def _stamp(who: Issued, principal: Principal) -> dict:
    return stamp_of(Credentials(tls={"client_cert_chain": [who.cert.read_text()]}), principal)


def test_a_stamped_certificate_holds_until_it_is_revoked(pki: Pki) -> None:
    auth, contexts = _auth(pki)
    stamp = _stamp(pki.alice, ALICE)
    assert reprove(auth, stamp).name == "alice"
    pki.ca.revoke(f"{pki.alice.serial:x}")
    contexts.reload_now()
    with pytest.raises(AuthFailed, match="revoked"):
        reprove(auth, stamp)


def test_certificates_that_prove_nobody_or_another_fail_closed(pki: Pki) -> None:
    auth, _ = _auth(pki)
    assert reprove(auth, _stamp(pki.bob, BOB)).name == "bob"
    for who, principal in ((pki.revoked, ALICE), (pki.expired, ALICE), (pki.stranger, ALICE),
                           (pki.carol, ALICE), (pki.bob, ALICE), (pki.alice, BOB)):
        with pytest.raises(AuthFailed):
            reprove(auth, _stamp(who, principal))
    with pytest.raises(AuthFailed):  # not a certificate at all
        reprove(auth, {**_stamp(pki.alice, ALICE), "chain": ["-----BEGIN CERTIFICATE-----\nAAAA\n"]})
