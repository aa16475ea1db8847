"""What the front agrees to under TLS 1.2 (red team "tls10"): forward-secret key exchange (ECDHE) and AEAD
ciphers only, with an ECDSA certificate (``tls init``'s) and an RSA one (certbot's default) alike.

Python's default server list took the CBC suites with HMAC (``ECDHE-ECDSA-AES128-SHA256`` and its kin): a
client offering only those got them, and their MAC-then-encrypt record layer is the one padding oracles
(Lucky 13) are found in. Every suite the local OpenSSL knows is offered alone, so a suite added to a
default list later is judged too."""

from __future__ import annotations

import asyncio
import datetime as dt
import ssl
import warnings
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

from sentinel_mcp.tls.server_context import FrontTLS
from tests.tls.conftest import Pki
from tests.tls.tls_rig import front_in_process

pytestmark = pytest.mark.timeout(300)


def _rsa_server(directory: Path) -> tuple[Path, Path]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = dt.datetime.now(dt.timezone.utc)
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "rsa.crt", directory / "rsa.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    key_path.chmod(0o600)
    return cert_path, key_path


def _tls12_suites() -> list[str]:
    every = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    every.set_ciphers("ALL:COMPLEMENTOFALL:@SECLEVEL=0")
    return [c["name"] for c in every.get_ciphers() if c["protocol"] != "TLSv1.3"]


def _client(suite: str | None = None, version: ssl.TLSVersion = ssl.TLSVersion.TLSv1_2) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE  # the suites are what is looked at here
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # TLS 1.0 and 1.1, asked for on purpose
        ctx.minimum_version = ctx.maximum_version = version
    ctx.set_ciphers(f"{suite or 'ALL'}:@SECLEVEL=0")
    return ctx


async def _agreed(port: int, ctx: ssl.SSLContext) -> tuple[str, str, object] | None:
    """The suite, version and compression the front agreed to, or None when it refused."""
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port, ssl=ctx, server_hostname="localhost")
    except (ssl.SSLError, ConnectionError):
        return None
    sslobj = writer.get_extra_info("ssl_object")
    agreed = (sslobj.cipher()[0], sslobj.version(), sslobj.compression())
    writer.close()
    return agreed


def _forward_secret_aead(suite: str) -> bool:
    return suite.startswith("ECDHE-") and ("-GCM-" in suite or "CHACHA20-POLY1305" in suite)


@pytest.mark.parametrize("key_kind", ["ecdsa", "rsa"])
async def test_tls12_agrees_to_forward_secret_aead_suites_only(pki: Pki, tmp_path: Path, key_kind: str
                                                              ) -> None:
    cert, key = (pki.server.cert, pki.server.key) if key_kind == "ecdsa" else _rsa_server(tmp_path)
    async with front_in_process(FrontTLS(cert, key)) as (port, _):
        agreed = {}
        for suite in _tls12_suites():
            try:
                ctx = _client(suite)
            except ssl.SSLError:  # a suite this OpenSSL lists yet cannot offer
                continue
            got = await _agreed(port, ctx)
            if got is not None:
                agreed[suite] = got
        assert agreed, "no TLS 1.2 suite at all"
        assert sorted(s for s in agreed if not _forward_secret_aead(s)) == []
        # the AEAD suites of the certificate's kind are all there (a browser offers them)
        kind = "ECDSA" if key_kind == "ecdsa" else "RSA"
        assert {f"ECDHE-{kind}-AES128-GCM-SHA256", f"ECDHE-{kind}-AES256-GCM-SHA384",
                f"ECDHE-{kind}-CHACHA20-POLY1305"} <= set(agreed)
        assert {version for _, version, _ in agreed.values()} == {"TLSv1.2"}
        assert {compression for _, _, compression in agreed.values()} == {None}


async def test_versions_below_tls12_are_refused_and_tls13_is_agreed(pki: Pki) -> None:
    async with front_in_process(FrontTLS(pki.server.cert, pki.server.key)) as (port, _):
        for old in (ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1_1):
            assert await _agreed(port, _client(version=old)) is None, old
        got = await _agreed(port, _client(version=ssl.TLSVersion.TLSv1_3))
        assert got is not None and got[1] == "TLSv1.3" and got[2] is None
