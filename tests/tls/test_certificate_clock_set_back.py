"""A client certificate past its notAfter stays expired when the wall clock is set back: the resolver reads
the process clock (``core/process_clock.py``), which never goes back. Compared with the wall clock, a clock
set back past the certificate's end served it again for as long as the step lasted (a kept-alive connection
is checked per request; OpenSSL's handshake reads the wall clock, the per-request check refuses)."""

from __future__ import annotations

import time

import pytest

from sentinel_mcp.identity.certificates import CertificateResolver
from sentinel_mcp.identity.credentials import Credentials
from sentinel_mcp.identity.principal import Principal
from sentinel_mcp.identity.resolver import AuthFailed
from sentinel_mcp.tls.settings import CertificateMatch
from tests.tls.conftest import Pki

_time, _mono = time.time, time.monotonic
DAY = 86400


@pytest.mark.parametrize("back_to", [0, 61, 3600])  # seconds short of the jump forward it is set back by
def test_an_expired_certificate_stays_expired_when_the_clock_is_set_back(pki: Pki, monkeypatch, back_to):
    resolver = CertificateResolver(
        [(CertificateMatch(subject="CN=alice,O=Sentinel"), Principal("alice", "certificate"))], "optional"
    )
    alice = Credentials(peer="192.0.2.9", tls={"client_cert_chain": [pki.alice.cert.read_text()]})
    assert resolver.resolve(alice).name == "alice"
    monkeypatch.setattr(time, "time", lambda: _time() + 800 * DAY)  # past its end (the clock ran fast)
    with pytest.raises(AuthFailed, match="not valid now"):
        resolver.resolve(alice)
    monkeypatch.setattr(time, "time", lambda: _time() + back_to)  # set back 800 days (nearly)
    monkeypatch.setattr(time, "monotonic", lambda: _mono() + 1)
    with pytest.raises(AuthFailed, match="not valid now"):
        resolver.resolve(alice)


def test_a_certificate_within_its_dates_is_served_whatever_the_clock_did(pki: Pki, monkeypatch) -> None:
    resolver = CertificateResolver(
        [(CertificateMatch(subject="CN=alice,O=Sentinel"), Principal("alice", "certificate"))], "optional"
    )
    alice = Credentials(peer="192.0.2.9", tls={"client_cert_chain": [pki.alice.cert.read_text()]})
    monkeypatch.setattr(time, "time", lambda: _time() - 365 * DAY)  # set back a year: before its notBefore
    monkeypatch.setattr(time, "monotonic", lambda: _mono() + 1)
    assert resolver.resolve(alice).name == "alice"  # the process clock kept today's date
