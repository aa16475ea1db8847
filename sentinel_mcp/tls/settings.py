"""The TLS parts of the config: the HTTP front's (``sentinel.http.tls``), a client's towards one server
(``mcpServers.<name>.tls``, ``sentinel.a2a.peer_tls``), and how a certificate names a principal.

Imports nothing of the project (``config.py`` nests these models)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

ClientCertificates = Literal["required", "optional", "off"]
_HEX = re.compile(r"^[0-9a-f]{64}$")

if TYPE_CHECKING:
    from cryptography import x509


def normalize_sha256(value: str) -> str:
    """``AB:CD:...`` or ``abcd...`` (as ``openssl x509 -fingerprint -sha256`` prints it) -> 64 lower-case hex.
    """
    text = value.strip().lower()
    text = text.removeprefix("sha256:").removeprefix("sha256=").replace(":", "")
    if not _HEX.fullmatch(text):
        raise ValueError(f"{value!r} is not a SHA-256 fingerprint (64 hex digits, colons allowed)")
    return text


@lru_cache(maxsize=64)
def subject_name(text: str) -> x509.Name | None:
    """``parse_subject``, or None when unreadable; cached: every client certificate is matched."""
    try:
        return parse_subject(text)
    except ValueError:
        return None


def parse_subject(text: str) -> x509.Name:
    """An RFC 4514 name as ``sentinel-mcp tls issue`` prints it (most specific first:
    ``CN=alice,O=Sentinel``);
    spaces around ``,`` and ``=`` and lower-case attribute types are tolerated. ValueError when unreadable."""
    # imported here: only a config naming a certificate subject needs it, and ``config.py`` imports this
    # module on every start (cryptography's x509 is 0.1 s of the gateway's cold start, issue 21)
    from cryptography import x509

    try:
        return x509.Name.from_rfc4514_string(text)
    except ValueError:
        pass
    parts = []
    for part in re.split(r"(?<!\\),", text):
        kind, sep, value = part.partition("=")
        if not sep or not kind.strip() or not value.strip():
            raise ValueError(f"{text!r} is not an RFC 4514 name such as 'CN=alice,O=Sentinel'")
        value = value.lstrip()
        value = value if value.endswith("\\ ") else value.rstrip()
        parts.append(f"{kind.strip().upper()}={value}")
    try:
        return x509.Name.from_rfc4514_string(",".join(parts))
    except ValueError:
        raise ValueError(f"{text!r} is not an RFC 4514 name such as 'CN=alice,O=Sentinel'") from None


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CertificateMatch(_Strict):
    """Which client certificates name a principal. Every field given must match; the certificate has already
    been checked against the front's CA bundle. With several CAs in it, ``subject`` and ``san`` mean nothing
    without the issuer (any of them could issue that name): ``issuer`` or ``issuer_sha256`` names the CA of
    the bundle that must have signed the certificate; a rule without either is refused at start."""

    subject: str | None = None  # RFC 4514, e.g. "CN=alice,O=Sentinel"
    san: str | None = None  # a subjectAltName: "DNS:peer.lan", "IP:192.0.2.7", "URI:...", "email:..."
    sha256: str | None = None  # the certificate's SHA-256 fingerprint: exactly this certificate
    issuer: str | None = None  # RFC 4514 subject of the CA (in the bundle) that signed the certificate
    issuer_sha256: str | None = None  # SHA-256 fingerprint of that CA's certificate

    @field_validator("sha256", "issuer_sha256")
    @classmethod
    def _fingerprint(cls, v: str | None) -> str | None:
        return normalize_sha256(v) if v is not None else None

    @field_validator("subject", "issuer")
    @classmethod
    def _subject(cls, v: str | None) -> str | None:
        if v is not None and not len(parse_subject(v)):
            raise ValueError("an empty name: write it as RFC 4514, such as 'CN=alice,O=Sentinel'")
        return v

    @field_validator("san")
    @classmethod
    def _san(cls, v: str | None) -> str | None:
        if v is not None and not re.match(r"^(DNS|IP|URI|email):.+", v, re.IGNORECASE):
            raise ValueError(f"san {v!r}: write it as DNS:<name>, IP:<address>, URI:<uri> or email:<address>")
        return v

    @model_validator(mode="after")
    def _some(self) -> "CertificateMatch":
        if not (self.subject or self.san or self.sha256):
            raise ValueError("a certificate match needs 'subject', 'san' or 'sha256'")
        return self


class ServerTLS(_Strict):
    """The HTTP front's certificate, and with ``ca`` the clients' certificates (mutual TLS)."""

    cert: str = Field(min_length=1)  # PEM: the server's certificate (chain)
    key: str = Field(min_length=1)  # PEM: its private key
    ca: str | None = None  # PEM bundle client certificates must chain to
    crl: str | None = None  # PEM CRL(s) of that CA: revoked client certificates are refused
    # "required": no connection without a valid client certificate; "optional": a token or a certificate;
    # "off": none asked for. Default: "optional" with a CA, "off" without.
    client_certificates: ClientCertificates | None = None
    owner: CertificateMatch | None = None  # a client certificate that is the owner (as the owner's token is)
    handshake_timeout: float = Field(10.0, gt=0, le=120)

    @model_validator(mode="after")
    def _mode(self) -> "ServerTLS":
        if self.client_certificates is None:
            self.client_certificates = "optional" if self.ca else "off"
        if self.client_certificates != "off" and not self.ca:
            raise ValueError(
                f"client_certificates {self.client_certificates!r} needs 'ca' (the CA bundle client "
                "certificates are checked against)"
            )
        if self.crl and not self.ca:
            raise ValueError("'crl' needs 'ca'")
        if self.owner and self.client_certificates == "off":
            raise ValueError("'owner' names a client certificate, but client_certificates is 'off'")
        return self

    @property
    def mode(self) -> ClientCertificates:
        return self.client_certificates or "off"


class ClientTLS(_Strict):
    """How Sentinel, as a client, checks one server and proves itself to it."""

    ca: str | None = None  # PEM bundle the server's certificate must chain to (default: the system's store)
    cert: str | None = None  # PEM: Sentinel's client certificate (mutual TLS)
    key: str | None = None  # PEM: its key (default: in ``cert``)
    # accepted SHA-256 fingerprints of the server's certificate, checked on top of the chain (any one matches)
    pin_sha256: list[str] = Field(default_factory=list)

    @field_validator("pin_sha256", mode="before")
    @classmethod
    def _pins(cls, v: object) -> object:
        if isinstance(v, str):
            v = [v]
        if isinstance(v, list):
            return [normalize_sha256(p) if isinstance(p, str) else p for p in v]
        return v

    @model_validator(mode="after")
    def _pair(self) -> "ClientTLS":
        if self.key and not self.cert:
            raise ValueError("'key' without 'cert'")
        return self
