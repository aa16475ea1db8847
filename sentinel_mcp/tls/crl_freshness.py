"""How recent the CRL of each CA of the bundle is, so that a CRL file is never taken back in time.

A CRL is public data, often fetched over plain HTTP: whoever is on that path cannot forge one (it is signed),
but can hand back an older one, still signed and within its nextUpdate, that lacks the revocations made since.
Taken, it admits those certificates again. So a changed CRL file is compared, CA by CA, with the one in
force: a CA still in the bundle whose CRL is older (CRL number, else lastUpdate) or gone is a rollback, and
the change is refused. Only CRLs that a CA of the bundle signed count (an unsigned one claiming a huge number
would otherwise make every later real CRL look older). The mark outlives a restart in the data dir
(``crl_mark.py``).
"""

from __future__ import annotations

import hashlib

from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding

# a CA certificate's SHA-256 -> (the CRL number, or -1 without one; lastUpdate; nextUpdate or None, as POSIX
# seconds) of the newest CRL it signed
Freshness = dict[str, tuple[int, float, float | None]]


def freshness(crls: list[x509.CertificateRevocationList], cas: list[x509.Certificate]) -> Freshness:
    out: Freshness = {}
    for ca in cas:
        key = hashlib.sha256(ca.public_bytes(Encoding.DER)).hexdigest()
        for crl in crls:
            if crl.issuer != ca.subject or not crl.is_signature_valid(ca.public_key()):  # type: ignore[arg-type]
                continue
            try:
                number = crl.extensions.get_extension_for_class(x509.CRLNumber).value.crl_number
            except x509.ExtensionNotFound:
                number = -1
            due = crl.next_update_utc
            stamp = (number, crl.last_update_utc.timestamp(), due.timestamp() if due is not None else None)
            if key not in out or stamp[:2] > out[key][:2]:
                out[key] = stamp
    return out


def newest(*each: Freshness) -> Freshness:
    """Each CA's newest CRL among several sets (the ``crl`` file's and the ``ca`` bundle's)."""
    out: Freshness = {}
    for fresh in each:
        for ca, stamp in fresh.items():
            if ca not in out or stamp[:2] > out[ca][:2]:
                out[ca] = stamp
    return out


def rolled_back(in_force: Freshness, changed: Freshness, still_trusted: set[str]) -> str | None:
    """Why the ``changed`` CRLs would take a CA of the bundle back in time (None: they do not)."""
    for ca, stamp in in_force.items():
        if ca not in still_trusted:
            continue  # that CA left the bundle: its CRL may go with it
        new = changed.get(ca)
        if new is None:
            return (f"it no longer holds a CRL of the CA {ca[:16]}… (it did): that would lift its "
                    "revocations")
        if new[:2] < stamp[:2]:
            return (f"its CRL of the CA {ca[:16]}… is older than the one in force (CRL number {new[0]} "
                    f"against {stamp[0]}): an older CRL lacks the revocations made since")
    return None


def expired_at(fresh: Freshness, now: float) -> float | None:
    """When the first CRL in force (each CA's newest) expired, if one has (POSIX seconds); else None. OpenSSL
    then refuses every client certificate of that CA in the handshake."""
    due = [stamp[2] for stamp in fresh.values() if stamp[2] is not None and stamp[2] < now]
    return min(due) if due else None
