"""A CRL file revokes; it never adds a CA (red team "identity").

The front handed the CRL file to OpenSSL as a CA file (``load_verify_locations(cafile=crl)``), which loads
every certificate in it as a trust anchor beside the CRLs. A CRL is public, signed data, commonly fetched
over plain HTTP from its distribution point by a scheduled job: whoever could change that download could add
their own CA next to the real CRL, and every client certificate that CA issued ("CN=alice", the owner's
subject) passed the handshake, unseen by the CA bundle's checks (one CA in ``ca``: subject-only rules stand).
Now a CRL file that holds anything but CRLs is refused, at start and when it changes (the front keeps the
files it had).
"""

from __future__ import annotations

import os
import ssl

import httpx2
import pytest
from tests.tls.tls_rig import front_in_process

from sentinel_mcp.tls.server_context import FrontTLS, ServerContexts, TLSSetupError


async def _subject(port: int, pki, who) -> str:
    ctx = ssl.create_default_context(cafile=str(pki.ca.ca_cert_path))
    ctx.load_cert_chain(str(who.cert), str(who.key))
    async with httpx2.AsyncClient(verify=ctx, timeout=10) as client:
        return (await client.get(f"https://localhost:{port}/")).text


def _with(pki, tmp_path, *blocks: bytes):
    crl = tmp_path / "crl.pem"
    crl.write_bytes(pki.ca.crl_path.read_bytes() + b"".join(blocks))
    return crl


@pytest.mark.parametrize("label", [b"CERTIFICATE", b"TRUSTED CERTIFICATE", b"X509 CERTIFICATE"])
def test_a_crl_file_that_holds_a_certificate_is_refused(pki, tmp_path, label):
    ca = pki.other_ca.ca_cert_path.read_bytes().replace(b"CERTIFICATE-----", label + b"-----")
    crl = _with(pki, tmp_path, ca)
    tls = FrontTLS(pki.server.cert, pki.server.key, pki.ca.ca_cert_path, crl, "optional")
    with pytest.raises(TLSSetupError, match="CRL"):
        ServerContexts(tls)


async def test_a_ca_slipped_into_a_changed_crl_file_admits_nobody(pki, tmp_path):
    crl = _with(pki, tmp_path)
    tls = FrontTLS(pki.server.cert, pki.server.key, pki.ca.ca_cert_path, crl, "optional")
    async with front_in_process(tls) as (port, acceptor):
        assert await _subject(port, pki, pki.alice) == "CN=alice,O=Sentinel"
        with pytest.raises((httpx2.HTTPError, ssl.SSLError)):
            await _subject(port, pki, pki.stranger)  # CN=alice from another CA
        # the next download of the CRL carries another CA (and its own empty CRL) beside the real list
        _with(pki, tmp_path, pki.other_ca.ca_cert_path.read_bytes(), pki.other_ca.crl_path.read_bytes())
        os.utime(crl, ns=(os.stat(crl).st_mtime_ns + 10**9,) * 2)
        acceptor.contexts.reload_now()
        with pytest.raises((httpx2.HTTPError, ssl.SSLError)):
            await _subject(port, pki, pki.stranger)
        assert await _subject(port, pki, pki.alice) == "CN=alice,O=Sentinel"  # the previous files serve on
        assert "CRL" in acceptor.contexts.warnings[0]


async def test_a_ca_the_bundle_checks_cannot_see_is_refused(pki, tmp_path):
    """``TRUSTED CERTIFICATE`` is OpenSSL's own label: OpenSSL trusted such a CA, the bundle's reader did not
    see it, so the front counted one CA and let subject-only rules (any CA could issue that name) stand."""
    hidden = pki.other_ca.ca_cert_path.read_bytes().replace(b"CERTIFICATE-----", b"TRUSTED CERTIFICATE-----")
    bundle = tmp_path / "bundle.pem"
    bundle.write_bytes(pki.ca.ca_cert_path.read_bytes() + hidden)
    tls = FrontTLS(pki.server.cert, pki.server.key, bundle, None, "optional")
    with pytest.raises(TLSSetupError, match="TRUSTED CERTIFICATE"):
        ServerContexts(tls)
