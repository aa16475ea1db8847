"""The CAs of the front's ``ca`` bundle, and which of them issued a client certificate.

A certificate rule that names its issuer (``issuer``: the CA's subject, ``issuer_sha256``: the CA
certificate's fingerprint) matches only a certificate that CA signed. Python before 3.13 cannot hand out the
chain OpenSSL verified, so the issuer is found here instead: the CAs of the bundle whose subject is the
certificate's issuer and whose key verifies its signature (the handshake has already checked the chain, the
dates and the CRL). An intermediate CA that signs client certificates belongs in the bundle for this reason.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from threading import Lock

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.serialization import Encoding

from sentinel_mcp.tls.settings import CertificateMatch, subject_name

_CACHE = 512  # certificates whose issuers are remembered (a client reconnecting shows the same one)


@dataclass(frozen=True)
class TrustedCA:
    subject: x509.Name
    subject_text: str  # RFC 4514
    sha256: str  # of the CA certificate's DER, lower-case hex
    certificate: x509.Certificate = field(repr=False, compare=False)

    def answers_to(self, rule: CertificateMatch) -> bool:
        """This CA is the one the rule names (every issuer part given must match)."""
        if rule.issuer_sha256 is not None and rule.issuer_sha256 != self.sha256:
            return False
        return rule.issuer is None or subject_name(rule.issuer) == self.subject


class TrustedCAs:
    """The CA certificates of one bundle, as loaded (a changed bundle file makes a new one)."""

    def __init__(self, cas: tuple[TrustedCA, ...]) -> None:
        self.cas = cas
        self._issuers: OrderedDict[bytes, tuple[TrustedCA, ...]] = OrderedDict()
        self._lock = Lock()

    @classmethod
    def from_pem(cls, data: bytes) -> "TrustedCAs":
        certs = x509.load_pem_x509_certificates(data)  # ValueError when there is none
        found: dict[str, TrustedCA] = {}
        for cert in certs:
            der = cert.public_bytes(Encoding.DER)
            sha = hashlib.sha256(der).hexdigest()
            found.setdefault(sha, TrustedCA(cert.subject, cert.subject.rfc4514_string(), sha, cert))
        return cls(tuple(found.values()))

    @classmethod
    def from_file(cls, path: str | Path) -> "TrustedCAs":
        return cls.from_pem(Path(path).read_bytes())

    @property
    def several(self) -> bool:
        return len(self.cas) > 1

    def issuers_of(self, der: bytes) -> tuple[TrustedCA, ...]:
        """The CAs of this bundle that signed the certificate ``der`` directly (none: it chains through a CA
        that is not in the bundle, or is not a certificate)."""
        with self._lock:
            known = self._issuers.get(der)
            if known is not None:
                self._issuers.move_to_end(der)
                return known
        try:
            cert = x509.load_der_x509_certificate(der)
        except ValueError:
            return ()
        out = []
        for ca in self.cas:
            try:
                cert.verify_directly_issued_by(ca.certificate)
            except (ValueError, TypeError, InvalidSignature):
                continue
            out.append(ca)
        found = tuple(out)
        with self._lock:
            self._issuers[der] = found
            while len(self._issuers) > _CACHE:
                self._issuers.popitem(last=False)
        return found

    def check(self, rules: list[tuple[str, CertificateMatch]]) -> None:
        """ValueError naming the rule when one cannot be trusted with this bundle: a subject or SAN rule
        without an issuer when the bundle holds several CAs (any of them could issue that name), or an issuer
        that no CA, or several CAs, of the bundle answer to. ``rules``: (where it is written, the rule)."""
        for where, rule in rules:
            if rule.issuer is None and rule.issuer_sha256 is None:
                if rule.sha256 is None and self.several:
                    listed = "; ".join(f"{c.subject_text} sha256 {c.sha256}" for c in self.cas)
                    raise ValueError(
                        f"{where} matches a certificate by subject or SAN only, but the CA bundle holds "
                        f"{len(self.cas)} CAs ({listed}), and any of "
                        'them could issue that name. Add "issuer": "<the CA\'s subject>" or '
                        '"issuer_sha256": "<the CA certificate\'s SHA-256>" to the rule, or match the '
                        'certificate itself with "sha256"'
                    )
                continue
            named = [ca for ca in self.cas if ca.answers_to(rule)]
            if not named:
                raise ValueError(
                    f"{where} names the issuer {rule.issuer or rule.issuer_sha256!r}, which is no CA of the "
                    f"bundle (its CAs: {'; '.join(f'{c.subject_text} sha256 {c.sha256}' for c in self.cas)})"
                )
            if len(named) > 1:
                raise ValueError(
                    f"{where} names the issuer {rule.issuer!r}, but {len(named)} CAs of the bundle have that "
                    'subject; name it by "issuer_sha256" instead (' + ", ".join(c.sha256 for c in named) + ")"
                )


