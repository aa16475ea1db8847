"""A CRL past its nextUpdate stays expired when the wall clock is set back (``crl_problem`` reads the process
clock, ``core/process_clock.py``, which never goes back): compared with the wall clock, a clock set back an
hour (or a year) made an expired CRL fresh again, and every client certificate, a revoked-meanwhile one's
too, was served while the step lasted. OpenSSL's handshake reads the wall clock; the per-request check is what
refuses then."""

from __future__ import annotations

import time

import pytest

from sentinel_mcp.identity.certificates import CertificateResolver
from sentinel_mcp.identity.credentials import Credentials
from sentinel_mcp.identity.principal import Principal
from sentinel_mcp.identity.resolver import AuthFailed
from sentinel_mcp.tls.server_context import FrontTLS, ServerContexts
from sentinel_mcp.tls.settings import CertificateMatch
from tests.tls.conftest import Pki
from tests.tls.test_crl_expired import _expired_crl

_time, _mono = time.time, time.monotonic


@pytest.mark.parametrize("wall_by", [2 * 3600, 86400, 86400 * 365])
def test_an_expired_crl_stays_expired_when_the_clock_is_set_back(pki: Pki, monkeypatch, wall_by) -> None:
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
    pki.ca.crl_path.write_bytes(_expired_crl(pki))  # its nextUpdate an hour ago
    contexts.reload_now()
    assert contexts.crl_problem() is not None
    monkeypatch.setattr(time, "time", lambda: _time() - wall_by)
    monkeypatch.setattr(time, "monotonic", lambda: _mono() + 1)
    assert contexts.crl_problem() is not None
    with pytest.raises(AuthFailed, match="CRL .* expired"):
        resolver.resolve(alice)
