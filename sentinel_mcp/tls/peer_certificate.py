"""A certificate the other side presented, read once: fingerprint, subject, subjectAltNames, validity.

Parsing is cached by the certificate's bytes (a client reconnecting presents the same one). It is strict:
OpenSSL's handshake accepts certificates that ``cryptography`` cannot read (an x400Address SAN, an IP SAN of
5 bytes) and SAN texts in any bytes (``\u212aate.lan``, raw UTF-8 with a Kelvin sign, lower-cased to
``kate.lan``). A certificate read only in part, or whose DNS, URI or email SAN is not visible ASCII (what an
IA5String SAN may hold), is ``CertificateUnreadable``: it names no principal, whatever else it says."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import ipaddress
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from sentinel_mcp.core.errors import TLSError
from sentinel_mcp.tls.settings import CertificateMatch, subject_name

# the key of the ASGI TLS extension (and the attribute of the front's SSL context) holding the CA bundle a
# connection's handshake verified its client certificate with: a request on a connection made before ``ca``
# changed is checked against what changed (``identity/certificates.py``)
HANDSHAKE_BUNDLE = "sentinel_trusted_cas"

if TYPE_CHECKING:  # cryptography is imported by the first certificate read, not at start-up (issue 21)
    from cryptography import x509

    from sentinel_mcp.tls.trusted_cas import TrustedCA


_VISIBLE_ASCII = re.compile(r"[\x21-\x7e]+")
_SHOWN = 80  # characters of a refused SAN value in a reason (the client wrote it)


class CertificateUnreadable(TLSError, ValueError):
    """A certificate that cannot be read whole and strictly; the message says what (bounded)."""


@dataclass(frozen=True)
class PeerCertificate:
    der: bytes
    sha256: str  # hex, lower case
    subject: x509.Name
    subject_text: str  # RFC 4514
    issuer_text: str
    sans: tuple[
        tuple[str, str], ...
    ]  # ("DNS", "peer.lan"), ("IP", "192.0.2.7"), ("URI", ...), ("email", ...)
    serial: int
    not_before: dt.datetime
    not_after: dt.datetime
    is_ca: bool = False  # basicConstraints CA:TRUE: a CA's certificate, never a client's

    def describe(self) -> str:
        return f"{self.subject_text or '(no subject)'} (sha256 {self.sha256[:16]}…, serial {self.serial:x})"

    def matches(self, rule: CertificateMatch, issued_by: tuple[TrustedCA, ...] = ()) -> bool:
        """Every part the rule gives must match: the subject as a whole (parsed, so spacing and escaping do
        not matter), one subjectAltName of the same type (DNS names case-insensitively, IPs by value), the
        fingerprint in constant time, and the issuer: one of ``issued_by`` (the CAs of the bundle that signed
        this certificate, ``TrustedCAs.issuers_of``) must be the CA the rule names."""
        if (rule.issuer is not None or rule.issuer_sha256 is not None) and not any(
            ca.answers_to(rule) for ca in issued_by
        ):
            return False
        if rule.sha256 is not None and not hmac.compare_digest(rule.sha256, self.sha256):
            return False
        if rule.subject is not None and subject_name(rule.subject) != self.subject:
            return False
        if rule.san is not None and not _san_matches(rule.san, self.sans):
            return False
        return True


def _san_matches(wanted: str, sans: tuple[tuple[str, str], ...]) -> bool:
    kind, _, value = wanted.partition(":")
    kind = {"dns": "DNS", "ip": "IP", "uri": "URI", "email": "email"}.get(kind.lower(), kind)
    for have_kind, have in sans:
        if have_kind != kind:
            continue
        if kind == "DNS" and have.lower().rstrip(".") == value.lower().rstrip("."):
            return True
        if kind == "IP":
            try:
                if ipaddress.ip_address(have) == ipaddress.ip_address(value):
                    return True
            except ValueError:
                continue
        elif kind in ("URI", "email") and have == value:
            return True
    return False


def _sans(cert: x509.Certificate) -> tuple[tuple[str, str], ...]:
    from cryptography import x509

    try:
        ext = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return ()
    out: list[tuple[str, str]] = []
    out += [("DNS", v) for v in ext.get_values_for_type(x509.DNSName)]
    out += [("IP", str(v)) for v in ext.get_values_for_type(x509.IPAddress)]
    out += [("URI", v) for v in ext.get_values_for_type(x509.UniformResourceIdentifier)]
    out += [("email", v) for v in ext.get_values_for_type(x509.RFC822Name)]
    for kind, value in out:
        if kind != "IP" and not _VISIBLE_ASCII.fullmatch(value):
            shown = repr(value[:_SHOWN]) + ("…" if len(value) > _SHOWN else "")
            raise CertificateUnreadable(f"its {kind} subjectAltName {shown} is not visible ASCII")
    return tuple(out)


def _is_ca(cert: x509.Certificate) -> bool:
    from cryptography import x509

    try:
        return bool(cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca)
    except x509.ExtensionNotFound:
        return False


@lru_cache(maxsize=512)
def from_der(der: bytes) -> PeerCertificate:
    """The certificate read whole; ``CertificateUnreadable`` (a ValueError) when it cannot be."""
    from cryptography import x509

    try:
        cert = x509.load_der_x509_certificate(der)
        return PeerCertificate(
            der=der,
            sha256=hashlib.sha256(der).hexdigest(),
            subject=cert.subject,
            subject_text=cert.subject.rfc4514_string(),
            issuer_text=cert.issuer.rfc4514_string(),
            sans=_sans(cert),
            serial=cert.serial_number,
            not_before=cert.not_valid_before_utc,
            not_after=cert.not_valid_after_utc,
            is_ca=_is_ca(cert),
        )
    except CertificateUnreadable:
        raise
    # cryptography's reading errors are not all ValueErrors (an x400Address SAN, a repeated extension)
    except (ValueError, x509.UnsupportedGeneralNameType, x509.DuplicateExtension, x509.InvalidVersion) as e:
        raise CertificateUnreadable(str(e)[:200]) from None


@lru_cache(maxsize=512)
def from_pem(pem: str) -> PeerCertificate:
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding

    return from_der(x509.load_pem_x509_certificate(pem.encode()).public_bytes(Encoding.DER))


def fingerprint(der: bytes) -> str:
    return hashlib.sha256(der).hexdigest()


def colon_hex(sha256_hex: str) -> str:
    return ":".join(sha256_hex[i : i + 2] for i in range(0, len(sha256_hex), 2)).upper()
