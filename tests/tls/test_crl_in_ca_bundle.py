"""A CRL in the ``ca`` bundle counts, as one in the ``crl`` file does (red team "tls2"). The bundle may hold
CRLs (OpenSSL has always read them from a CA file), but without ``crl`` no revocation was checked at all, so a
certificate a CRL of the bundle revokes was admitted; with ``crl`` the handshake used them, but not the check
of a kept-alive connection."""

from __future__ import annotations

import ssl
from pathlib import Path

import httpx2
import pytest

from sentinel_mcp.tls.peer_certificate import from_pem
from sentinel_mcp.tls.server_context import FrontTLS, ServerContexts
from tests.tls.conftest import Pki
from tests.tls.tls_rig import front_in_process

pytestmark = pytest.mark.timeout(120)


async def test_a_crl_in_the_ca_bundle_revokes(pki: Pki, tmp_path: Path) -> None:
    bundle = tmp_path / "bundle.pem"
    bundle.write_bytes(pki.ca.ca_cert_path.read_bytes() + pki.ca.crl_path.read_bytes())
    tls = FrontTLS(pki.server.cert, pki.server.key, bundle, None, "optional")
    async with front_in_process(tls) as (port, acceptor):

        async def who(issued: object) -> str:
            ctx = ssl.create_default_context(cafile=str(pki.ca.ca_cert_path))
            ctx.load_cert_chain(str(issued.cert), str(issued.key))  # type: ignore[attr-defined]
            async with httpx2.AsyncClient(verify=ctx, timeout=30) as client:
                return (await client.get(f"https://127.0.0.1:{port}/")).text

        assert await who(pki.alice) == "CN=alice,O=Sentinel"
        with pytest.raises((httpx2.HTTPError, ssl.SSLError), match="revoked"):
            await who(pki.revoked)
        assert acceptor.contexts.is_revoked(from_pem(pki.revoked.cert.read_text()))
        assert not acceptor.contexts.is_revoked(from_pem(pki.alice.cert.read_text()))


def test_with_a_crl_file_too_both_count_on_kept_alive_connections(pki: Pki, tmp_path: Path) -> None:
    older = tmp_path / "crl.pem"
    older.write_bytes(pki.ca.crl_path.read_bytes())  # the crl file revokes "revoked" only
    pki.ca.revoke("bob")
    bundle = tmp_path / "bundle.pem"  # the bundle's CRL, newer, revokes bob too
    bundle.write_bytes(pki.ca.ca_cert_path.read_bytes() + pki.ca.crl_path.read_bytes())
    contexts = ServerContexts(FrontTLS(pki.server.cert, pki.server.key, bundle, older, "optional"))
    for revoked in (pki.revoked, pki.bob):
        assert contexts.is_revoked(from_pem(revoked.cert.read_text())), revoked.name
    assert not contexts.is_revoked(from_pem(pki.alice.cert.read_text()))


def test_a_crl_in_the_bundle_no_ca_signed_is_refused(pki: Pki, tmp_path: Path) -> None:
    from sentinel_mcp.tls.server_context import TLSSetupError

    bundle = tmp_path / "bundle.pem"
    bundle.write_bytes(pki.ca.ca_cert_path.read_bytes() + pki.other_ca.crl_path.read_bytes())
    with pytest.raises(TLSSetupError, match="not signed by a CA"):
        ServerContexts(FrontTLS(pki.server.cert, pki.server.key, bundle, None, "optional"))
