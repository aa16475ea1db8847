"""A small local certificate authority in the data dir, for a deployment without a PKI of its own.

``<data_dir>/tls/`` (mode 0700) holds ``ca.pem`` + ``ca-key.pem``, the front's ``server.pem`` +
``server-key.pem``, ``crl.pem`` (the revocation list the front checks), and ``issued/NAME.pem`` +
``NAME-key.pem`` for each client certificate, listed in ``index.json``. Every key is written with mode 0600
(created exclusively, then renamed into place). ECDSA P-256 keys, SHA-256 signatures.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import os
import re
import secrets
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from sentinel_mcp.tls.peer_certificate import fingerprint
from sentinel_mcp.core.errors import TLSError

NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")  # a principal's name (config.PRINCIPAL_NAME)
CA_DAYS = 3650
LEAF_DAYS = 397
CRL_DAYS = 365


class AuthorityError(TLSError):
    """Something the user can fix (no CA yet, an unknown name, a file that cannot be written)."""


def tls_dir(data_dir: Path) -> Path:
    return Path(data_dir) / "tls"


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def write_private(path: Path, data: bytes) -> None:
    """Write a key readable by its owner only: a fresh 0600 file renamed over the old one (never a moment
    in which the key sits in a file others can read)."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


def write_public(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    tmp.write_bytes(data)
    tmp.chmod(0o644)
    os.replace(tmp, path)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _cert_pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def machine_names() -> list[str]:
    names = ["localhost"]
    host = socket.gethostname()
    if host and host not in names:
        names.append(host)
    return names


def machine_addresses() -> list[str]:
    """This machine's addresses (loopback included; IPv6 link-local ones left out: they need a scope)."""
    out = ["127.0.0.1", "::1"]
    try:
        import ifaddr

        for adapter in ifaddr.get_adapters():
            for ip in adapter.ips:
                addr = ip.ip[0] if isinstance(ip.ip, tuple) else ip.ip
                try:
                    parsed = ipaddress.ip_address(addr)
                except ValueError:
                    continue
                if parsed.is_link_local or str(parsed) in out:
                    continue
                out.append(str(parsed))
    except Exception:  # noqa: BLE001 - the loopback addresses are enough to start with
        pass
    return out


@dataclass
class Issued:
    name: str
    cert: Path
    key: Path
    sha256: str
    subject: str
    serial: int
    not_after: dt.datetime


class LocalCA:
    def __init__(self, directory: Path) -> None:
        self.dir = Path(directory)
        self.ca_cert_path = self.dir / "ca.pem"
        self.ca_key_path = self.dir / "ca-key.pem"
        self.server_cert_path = self.dir / "server.pem"
        self.server_key_path = self.dir / "server-key.pem"
        self.crl_path = self.dir / "crl.pem"
        self.issued_dir = self.dir / "issued"
        self.index_path = self.dir / "index.json"
        self._cert: x509.Certificate | None = None
        self._key: ec.EllipticCurvePrivateKey | None = None

    # ---------------------------------------------------------------- the CA itself
    @property
    def exists(self) -> bool:
        return self.ca_cert_path.exists() and self.ca_key_path.exists()

    def create(self) -> bool:
        """Create the CA unless it exists; True when created now."""
        if self.exists:
            return False
        self.dir.mkdir(parents=True, exist_ok=True)
        self.dir.chmod(0o700)
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Sentinel"),
                          x509.NameAttribute(NameOID.COMMON_NAME,
                                             f"Sentinel local CA {socket.gethostname()[:24]} "
                                             f"{secrets.token_hex(3)}")])
        now = _now()
        ski = x509.SubjectKeyIdentifier.from_public_key(key.public_key())
        cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=CA_DAYS))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=False,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(ski, critical=False)
            .sign(key, hashes.SHA256())
        )
        write_private(self.ca_key_path, _key_pem(key))
        write_public(self.ca_cert_path, _cert_pem(cert))
        self._cert, self._key = cert, key
        self.write_crl()
        return True

    def _load(self) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
        if self._cert is None or self._key is None:
            if not self.exists:
                raise AuthorityError(f"no local CA in {self.dir}: run `sentinel-mcp tls init` first")
            self._cert = x509.load_pem_x509_certificate(self.ca_cert_path.read_bytes())
            key = serialization.load_pem_private_key(self.ca_key_path.read_bytes(), password=None)
            if not isinstance(key, ec.EllipticCurvePrivateKey):
                raise AuthorityError(f"{self.ca_key_path}: not an EC key made by `sentinel-mcp tls init`")
            self._key = key
        return self._cert, self._key

    @property
    def subject(self) -> str:
        return self._load()[0].subject.rfc4514_string()

    # ---------------------------------------------------------------- certificates
    def sign(
        self,
        common_name: str,
        *,
        client: bool,
        server: bool,
        dns: list[str] | None = None,
        ips: list[str] | None = None,
        days: float = LEAF_DAYS,
        not_before: dt.datetime | None = None,
    ) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
        """A leaf certificate for ``common_name`` (``not_before`` lets tests make one that has expired)."""
        ca_cert, ca_key = self._load()
        key = ec.generate_private_key(ec.SECP256R1())
        start = not_before or (_now() - dt.timedelta(minutes=5))
        usages = ([ExtendedKeyUsageOID.CLIENT_AUTH] if client else []) + (
            [ExtendedKeyUsageOID.SERVER_AUTH] if server else []
        )
        builder = (
            x509.CertificateBuilder()
            .subject_name(
                x509.Name(
                    [
                        x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Sentinel"),
                        x509.NameAttribute(NameOID.COMMON_NAME, common_name),
                    ]
                )
            )
            .issuer_name(ca_cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start)
            .not_valid_after(start + dt.timedelta(days=days))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=False,
                    crl_sign=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
            )
        )
        alt: list[x509.GeneralName] = [x509.DNSName(n) for n in dns or []]
        alt += [x509.IPAddress(ipaddress.ip_address(a)) for a in ips or []]
        if alt:
            builder = builder.add_extension(x509.SubjectAlternativeName(alt), critical=False)
        return builder.sign(ca_key, hashes.SHA256()), key

    def issue_server(self, names: list[str], ips: list[str], days: float = LEAF_DAYS) -> Issued:
        cert, key = self.sign(
            names[0] if names else "sentinel", client=False, server=True, dns=names, ips=ips, days=days
        )
        write_private(self.server_key_path, _key_pem(key))
        write_public(self.server_cert_path, _cert_pem(cert))
        return self._issued("(server)", cert, self.server_cert_path, self.server_key_path)

    def issue_client(
        self,
        name: str,
        *,
        dns: list[str] | None = None,
        ips: list[str] | None = None,
        days: float = LEAF_DAYS,
        not_before: dt.datetime | None = None,
        file_stem: str | None = None,
    ) -> Issued:
        """A client certificate for a person or a peer; with ``dns``/``ips`` it also serves as that peer's
        server certificate. Re-issuing a name keeps the old certificate valid until it is revoked (its files
        are replaced unless ``file_stem`` names others)."""
        if not NAME.fullmatch(name):  # the whole name: "$" also matches before a last newline
            raise AuthorityError(
                f"{name!r} cannot name a principal (letters, digits, '_', '.', '-'; 64 at most)"
            )
        cert, key = self.sign(
            name, client=True, server=bool(dns or ips), dns=dns, ips=ips, days=days, not_before=not_before
        )
        self.issued_dir.mkdir(parents=True, exist_ok=True)
        self.issued_dir.chmod(0o700)
        stem = file_stem or name
        if not NAME.fullmatch(stem):
            raise AuthorityError(f"{stem!r} cannot name a file here")
        cert_path, key_path = self.issued_dir / f"{stem}.pem", self.issued_dir / f"{stem}-key.pem"
        write_private(key_path, _key_pem(key))
        write_public(cert_path, _cert_pem(cert))
        issued = self._issued(name, cert, cert_path, key_path)
        index = self.index()
        index.append(
            {
                "name": name,
                "serial": f"{cert.serial_number:x}",
                "sha256": issued.sha256,
                "subject": issued.subject,
                "not_after": issued.not_after.isoformat(),
                "revoked_at": None,
            }
        )
        self._write_index(index)
        return issued

    @staticmethod
    def _issued(name: str, cert: x509.Certificate, cert_path: Path, key_path: Path) -> Issued:
        der = cert.public_bytes(serialization.Encoding.DER)
        return Issued(
            name,
            cert_path,
            key_path,
            fingerprint(der),
            cert.subject.rfc4514_string(),
            cert.serial_number,
            cert.not_valid_after_utc,
        )

    # ---------------------------------------------------------------- revocation
    def index(self) -> list[dict[str, Any]]:
        try:
            data = json.loads(self.index_path.read_text())
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as e:
            raise AuthorityError(f"{self.index_path}: unreadable ({e})") from None
        return list(data.get("issued", [])) if isinstance(data, dict) else []

    def _write_index(self, entries: list[dict[str, Any]]) -> None:
        write_public(self.index_path, json.dumps({"issued": entries}, indent=2).encode())

    def revoke(self, what: str) -> list[dict[str, Any]]:
        """Revoke every live certificate issued to the name ``what``, or the one with that serial (hex) or
        SHA-256 fingerprint; rewrites ``crl.pem`` (a running front picks it up on its next connection)."""
        wanted = what.strip().lower().replace(":", "")
        index = self.index()
        hits = [
            e
            for e in index
            if e.get("revoked_at") is None
            and wanted in (e.get("name", "").lower(), e.get("serial", "").lower(), e.get("sha256", ""))
        ]
        if not hits:
            raise AuthorityError(
                f"no live certificate issued to or numbered {what!r} (see `sentinel-mcp tls list`)"
            )
        stamp = _now().isoformat()
        for e in hits:
            e["revoked_at"] = stamp
        self._write_index(index)
        self.write_crl()
        return hits

    def write_crl(self) -> Path:
        ca_cert, ca_key = self._load()
        now = _now()
        builder = (
            x509.CertificateRevocationListBuilder()
            .issuer_name(ca_cert.subject)
            .last_update(now - dt.timedelta(minutes=5))
            .next_update(now + dt.timedelta(days=CRL_DAYS))
            .add_extension(x509.CRLNumber(int(now.timestamp() * 1000)), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
            )
        )
        for e in self.index():
            if e.get("revoked_at"):
                revoked = (
                    x509.RevokedCertificateBuilder()
                    .serial_number(int(e["serial"], 16))
                    .revocation_date(dt.datetime.fromisoformat(e["revoked_at"]))
                    .build()
                )
                builder = builder.add_revoked_certificate(revoked)
        crl = builder.sign(ca_key, hashes.SHA256())
        write_public(self.crl_path, crl.public_bytes(serialization.Encoding.PEM))
        return self.crl_path
