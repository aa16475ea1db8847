"""Client certificates of odd shapes, each shown in a real handshake to a front that maps certificates to
principals (Sentinel's acceptor, ``CallerGuard`` and the certificate resolver, on 127.0.0.1): each names
exactly one principal or is refused with a reason the client can read (red team "tls4").

What broke: a SAN the ``cryptography`` reader cannot read (x400Address, EDIPartyName, a 5-byte IP) but
OpenSSL accepts hung its connection with no answer; a DNS SAN spelled with the Kelvin sign (U+212A, raw UTF-8
in the IA5String) was lower-cased to ``kate.lan`` and mapped to kate; a CA certificate (``CA:TRUE``) was taken
as a person's certificate; a certificate signed by an intermediate CA that is not in ``ca`` mapped by name.
What held is kept: several CNs, CN against SAN, a NUL in a SAN, a Cyrillic CN, the wrong EKU, dates; and
(red team "tls2") a wildcard DNS SAN, a name of one SAN kind under another, another case of a CN or an email,
a NUL after a CN, a chain through a certificate that is no CA, a key usage that cannot sign.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import ipaddress
import ssl
from pathlib import Path
from typing import Any, AsyncIterator

import httpx2
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, ExtensionOID, NameOID

from sentinel_mcp.identity.certificates import CertificateResolver
from sentinel_mcp.identity.principal import Principal
from sentinel_mcp.identity.resolver import SCOPE_KEY, Authenticator
from sentinel_mcp.tls.server_context import FrontTLS, ServerContexts
from sentinel_mcp.tls.settings import CertificateMatch
from tests.support.served_app import served_app

pytestmark = pytest.mark.timeout(300)

NOW = dt.datetime.now(dt.timezone.utc)
CLIENT = (ExtendedKeyUsageOID.CLIENT_AUTH,)
_OFF = dict.fromkeys(
    (
        "content_commitment",
        "key_encipherment",
        "data_encipherment",
        "key_agreement",
        "encipher_only",
        "decipher_only",
    ),
    False,
)


def _name(*cns: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Sentinel"),
            *(x509.NameAttribute(NameOID.COMMON_NAME, cn) for cn in cns),
        ]
    )


def _tlv(tag: int, body: bytes) -> bytes:
    n = len(body)
    size = (
        bytes([n])
        if n < 128
        else bytes([0x80 | ((n.bit_length() + 7) // 8)]) + n.to_bytes((n.bit_length() + 7) // 8, "big")
    )
    return bytes([tag]) + size + body


def _raw_sans(*names: tuple[int, bytes]) -> bytes:
    """A subjectAltName's DER from (context tag, bytes): what a CA that copies a request's bytes writes."""
    return _tlv(0x30, b"".join(_tlv(tag, value) for tag, value in names))


def _cert(
    subject: x509.Name,
    issuer: tuple[x509.Name, Any] | None = None,
    *,
    ca: bool = False,
    eku: tuple[Any, ...] | None = CLIENT,
    sans: list[Any] | None = None,
    raw_sans: bytes | None = None,
    start: dt.datetime | None = None,
    days: float = 30,
    signs: bool = True,
) -> tuple[Any, Any]:
    key = ec.generate_private_key(ec.SECP256R1())
    issuer_name, issuer_key = issuer or (subject, key)
    start = start or NOW - dt.timedelta(minutes=5)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(start + dt.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=signs,
                key_cert_sign=ca,
                crl_sign=ca,
                **{**_OFF, "key_encipherment": not signs},
            ),
            True,
        )
    )
    if eku:
        builder = builder.add_extension(x509.ExtendedKeyUsage(list(eku)), critical=False)
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    if raw_sans is not None:
        builder = builder.add_extension(
            x509.UnrecognizedExtension(ExtensionOID.SUBJECT_ALTERNATIVE_NAME, raw_sans), critical=False
        )
    return builder.sign(issuer_key, hashes.SHA256()), key


def _pem(*certs: Any) -> bytes:
    return b"".join(c.public_bytes(serialization.Encoding.PEM) for c in certs)


def _key_pem(key: Any) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


RULES = [
    (CertificateMatch(subject="CN=alice,O=Sentinel"), Principal("alice", "certificate")),
    (CertificateMatch(san="DNS:bob.lan"), Principal("bob", "certificate")),
    (CertificateMatch(san="DNS:kate.lan"), Principal("kate", "certificate")),
    (CertificateMatch(san="email:bob@x.example"), Principal("bob", "certificate")),
    (CertificateMatch(san="URI:spiffe://x/bob"), Principal("bob", "certificate")),
]


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A root (no path length bound), the front's certificate, an intermediate CA the root signed (not in
    ``ca``), and one client certificate (with its key) per shape, as ``<shape>.pem``."""
    d = tmp_path_factory.mktemp("shapes")
    root, root_key = _cert(_name("Root"), ca=True, eku=None)
    by_root = (root.subject, root_key)
    server, server_key = _cert(
        _name("localhost"),
        by_root,
        eku=(ExtendedKeyUsageOID.SERVER_AUTH,),
        sans=[x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))],
    )
    inter, inter_key = _cert(_name("Team CA"), by_root, ca=True, eku=None)
    later = NOW + dt.timedelta(days=1)
    alice_cert, alice_key = _cert(_name("alice"), by_root)
    made = {
        "alice": (alice_cert, alice_key),
        "bob-by-dns": _cert(_name("x"), by_root, sans=[x509.DNSName("BOB.lan.")]),
        "two-cns": _cert(_name("alice", "bob"), by_root),
        "two-cns-reversed": _cert(_name("bob", "alice"), by_root),
        "cn-alice-san-bob": _cert(_name("alice"), by_root, sans=[x509.DNSName("bob.lan")]),
        "cyrillic-cn": _cert(_name("\u0430lice"), by_root),
        "nul-in-email": _cert(_name("x"), by_root, raw_sans=_raw_sans((0x81, b"bob@x.example\x00.evil"))),
        "kelvin-dns": _cert(_name("x"), by_root, raw_sans=_raw_sans((0x82, "\u212aate.lan".encode()))),
        "utf8-dns-beside": _cert(
            _name("x"), by_root, raw_sans=_raw_sans((0x82, b"bob.lan"), (0x82, "alic\u00e9.lan".encode()))
        ),
        "zero-width-uri": _cert(
            _name("x"), by_root, raw_sans=_raw_sans((0x86, "spiffe://x/bob\u200b".encode()))
        ),
        "x400-san": _cert(_name("alice"), by_root, raw_sans=_tlv(0x30, _tlv(0xA3, _tlv(0x30, b"")))),
        "edi-party-san": _cert(
            _name("alice"), by_root, raw_sans=_tlv(0x30, _tlv(0xA5, _tlv(0xA1, _tlv(0x0C, b"x"))))
        ),
        "five-byte-ip": _cert(_name("alice"), by_root, raw_sans=_raw_sans((0x87, b"\x7f\x00\x00\x01\x05"))),
        "ca-true": _cert(_name("alice"), by_root, ca=True),
        "via-intermediate": _cert(_name("alice"), (inter.subject, inter_key)),
        "intermediate-itself": (inter, inter_key),
        "server-auth-only": _cert(_name("alice"), by_root, eku=(ExtendedKeyUsageOID.SERVER_AUTH,)),
        "email-protection-only": _cert(_name("alice"), by_root, eku=(ExtendedKeyUsageOID.EMAIL_PROTECTION,)),
        "not-yet-valid": _cert(_name("alice"), by_root, start=later),
        "wildcard-dns": _cert(_name("x"), by_root, sans=[x509.DNSName("*.lan")]),
        "email-as-dns": _cert(_name("x"), by_root, sans=[x509.DNSName("bob@x.example")]),
        "dns-as-uri": _cert(_name("x"), by_root, sans=[x509.UniformResourceIdentifier("bob.lan")]),
        "email-other-case": _cert(_name("x"), by_root, sans=[x509.RFC822Name("Bob@x.example")]),
        "upper-cn": _cert(_name("ALICE"), by_root),
        "nul-cn": _cert(_name("alice\x00"), by_root),
        "by-non-ca": _cert(_name("alice"), (alice_cert.subject, alice_key)),
        "no-signing-usage": _cert(_name("alice"), by_root, signs=False),
        "expired": _cert(_name("alice"), by_root, start=NOW - dt.timedelta(days=3), days=2),
    }
    (d / "root.pem").write_bytes(_pem(root))
    (d / "server.pem").write_bytes(_pem(server))
    (d / "server-key.pem").write_bytes(_key_pem(server_key))
    for stem, (cert, key) in made.items():
        along = {"via-intermediate": inter, "by-non-ca": alice_cert}.get(stem)  # the chain it sends
        (d / f"{stem}.pem").write_bytes(_pem(cert, along) if along is not None else _pem(cert))
        (d / f"{stem}-key.pem").write_bytes(_key_pem(key))
    return d


@contextlib.asynccontextmanager
async def mapping_front(d: Path) -> AsyncIterator[int]:
    """Sentinel's TLS acceptor, HTTP protocol, caller check and certificate resolver (``RULES``) in this
    loop; ``GET /who`` answers the principal's name."""
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    from sentinel_mcp.app.http_app import CallerGuard
    from sentinel_mcp.app.http_protocol import FrontHTTPProtocol
    from sentinel_mcp.tls.acceptor import TLSAcceptor

    async def who(request: Any) -> PlainTextResponse:
        return PlainTextResponse(request.scope[SCOPE_KEY].name)

    contexts = ServerContexts(
        FrontTLS(d / "server.pem", d / "server-key.pem", d / "root.pem", None, "optional")
    )
    resolver = CertificateResolver(
        RULES, "optional", is_revoked=contexts.is_revoked, trusted_cas=contexts.trusted_cas
    )
    acceptor = TLSAcceptor(contexts)

    def app_at(port: int) -> CallerGuard:
        guarded = Starlette(routes=[Route("/who", who)])
        return CallerGuard(guarded, bind_host="127.0.0.1", port=port, auth=Authenticator([resolver]))

    options = acceptor.uvicorn_options(FrontHTTPProtocol)
    async with served_app(app_at, closing=acceptor.close, **options) as port:
        yield port


async def _ask(d: Path, port: int, stem: str) -> tuple[int, str]:
    ctx = ssl.create_default_context(cafile=str(d / "root.pem"))
    ctx.load_cert_chain(str(d / f"{stem}.pem"), str(d / f"{stem}-key.pem"))
    # the bound is the socket's, never a measured time: a connection left without an answer fails the test
    async with httpx2.AsyncClient(verify=ctx, timeout=30) as client:
        r = await client.get(f"https://127.0.0.1:{port}/who")
    return r.status_code, r.text


# (shape, the principal it names, or the words of its refusal)
MAPPED = [("alice", "alice"), ("bob-by-dns", "bob")]
REFUSED = [
    ("two-cns", "names no principal"),
    ("two-cns-reversed", "names no principal"),
    ("cn-alice-san-bob", "matches several principals (alice, bob)"),
    ("cyrillic-cn", "names no principal"),
    ("nul-in-email", "not visible ASCII"),
    ("kelvin-dns", "not visible ASCII"),
    ("utf8-dns-beside", "not visible ASCII"),
    ("zero-width-uri", "not visible ASCII"),
    ("x400-san", "cannot be read"),
    ("edi-party-san", "cannot be read"),
    ("five-byte-ip", "cannot be read"),
    ("ca-true", "is a CA certificate"),
    ("via-intermediate", "no CA of the bundle signed it"),
    ("intermediate-itself", "is a CA certificate"),
    # red team "tls2": look-alikes of a rule's name, each of another kind or spelling
    ("wildcard-dns", "names no principal"),
    ("email-as-dns", "names no principal"),
    ("dns-as-uri", "names no principal"),
    ("email-other-case", "names no principal"),
    ("upper-cn", "names no principal"),
    ("nul-cn", "names no principal"),
]
HANDSHAKE_REFUSED = [
    ("server-auth-only", "UNSUPPORTED_CERTIFICATE"),
    ("email-protection-only", "UNSUPPORTED_CERTIFICATE"),
    ("not-yet-valid", "BAD_CERTIFICATE"),
    ("expired", "CERTIFICATE_EXPIRED"),
    ("by-non-ca", "UNKNOWN_CA"),  # alice's own certificate (CA:FALSE) signed it
    ("no-signing-usage", "UNSUPPORTED_CERTIFICATE"),  # keyUsage keyEncipherment only: it signs nothing
]


async def test_each_certificate_names_one_principal_or_is_refused_with_its_reason(shapes: Path) -> None:
    async with mapping_front(shapes) as port:
        got = {stem: await _ask(shapes, port, stem) for stem, _ in MAPPED + REFUSED}
        for stem, alert in HANDSHAKE_REFUSED:
            with pytest.raises((httpx2.HTTPError, ssl.SSLError), match=alert):
                await _ask(shapes, port, stem)
        # the front still serves after all of them
        assert await _ask(shapes, port, "alice") == (200, "alice")
    for stem, name in MAPPED:
        assert got[stem] == (200, name), (stem, got[stem])
    for stem, words in REFUSED:
        status, text = got[stem]
        assert status == 401 and words in text, (stem, status, text)
